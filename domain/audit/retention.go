package audit

import (
	"context"
	"log/slog"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/auditlog"
)

// Purge deletes audit rows older than retention and returns how many; a retention of zero
// keeps everything.
func Purge(ctx context.Context, client *ent.Client, retention time.Duration, now time.Time) (int, error) {
	if retention <= 0 {
		return 0, nil
	}
	return client.AuditLog.Delete().
		Where(auditlog.CreatedAtLT(now.Add(-retention))).
		Exec(authz.SystemContext(ctx, "audit-retention"))
}

// RetentionLoop purges expired audit rows every hour until ctx ends. Several processes may
// run it at once: deleting the same expired rows twice is harmless.
func RetentionLoop(ctx context.Context, client *ent.Client, retention time.Duration, log *slog.Logger) {
	if retention <= 0 {
		return
	}
	tick := time.NewTicker(time.Hour)
	defer tick.Stop()
	for {
		if n, err := Purge(ctx, client, retention, time.Now()); err != nil {
			log.Warn("audit retention purge failed", "err", err)
		} else if n > 0 {
			log.Info("audit rows past retention deleted", "rows", n, "retention", retention)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
