// Package notices says which announcements (ent Notice) are in force: a notice is shown from
// its publishedAt (its start) until its expiresAt (its end, none for a notice without one).
// The activeNotices query reads them; notices keeps the whole history, past and scheduled.
package notices

import (
	"context"
	"time"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/notice"
	"github.com/virtflow/virtflow/ent/predicate"
)

// Active selects the notices in force at now: published at or before now, and not yet
// expired (expiresAt unset or after now).
func Active(now time.Time) predicate.Notice {
	return notice.And(notice.PublishedAtLTE(now), notice.Or(notice.ExpiresAtIsNil(), notice.ExpiresAtGT(now)))
}

// Max is how many notices List returns at most.
const Max = 100

// List returns the notices in force at now that the viewer of ctx may read (ent privacy),
// newest first, at most Max.
func List(ctx context.Context, c *ent.Client, now time.Time) ([]*ent.Notice, error) {
	return c.Notice.Query().Where(Active(now)).
		Order(ent.Desc(notice.FieldPublishedAt), ent.Desc(notice.FieldID)).Limit(Max).All(ctx)
}
