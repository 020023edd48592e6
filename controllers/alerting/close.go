package alerting

import (
	"context"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/alert"
)

// Close closes the open alert id as the viewer of ctx: status CLOSED, closedAt now and
// closedBy the viewer's name, all set here rather than taken from the client. Closing a
// closed alert (also one closed concurrently) changes nothing and returns it as it is. Ent
// privacy decides who may: an alert the viewer cannot read is NOT_FOUND, one it may read but
// not change is FORBIDDEN.
func Close(ctx context.Context, c *ent.Client, id int) (*ent.Alert, error) {
	get := func() (*ent.Alert, error) {
		a, err := c.Alert.Get(ctx, id)
		if ent.IsNotFound(err) {
			return nil, apierr.NotFound("alert %d not found", id)
		}
		return a, err
	}
	a, err := get()
	if err != nil || a.Status == alert.StatusClosed {
		return a, err
	}
	closed, err := c.Alert.UpdateOneID(id).Where(alert.StatusEQ(alert.StatusOpen)).
		SetStatus(alert.StatusClosed).SetClosedAt(time.Now()).SetClosedBy(authz.Actor(ctx)).
		Save(ctx)
	if err == nil {
		// Closing a cause releases the alerts it suppressed.
		err = AfterChange(ctx, c, id)
	}
	if !ent.IsNotFound(err) {
		return closed, err
	}
	// No row matched: closed (or deleted) by someone else between the read and the update, or
	// one the viewer may read but not change (a maintainer's write is limited to its own).
	if a, err = get(); err == nil && a.Status != alert.StatusClosed {
		return nil, apierr.Forbidden("only operators and the maintainers of its host or node may close alert %d", id)
	}
	return a, err
}
