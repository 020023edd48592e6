package audit_test

import (
	"context"
	"testing"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/audit"
	"github.com/virtflow/virtflow/internal/platform/infra"
)

func TestPurge(t *testing.T) {
	ctx := authz.SystemContext(context.Background(), "test")
	db, err := infra.OpenDatabase(ctx, "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Now()
	for _, age := range []time.Duration{48 * time.Hour, 2 * time.Hour, time.Minute} {
		db.Client.AuditLog.Create().SetActor("a").SetAction("createRack").SetCreatedAt(now.Add(-age)).SaveX(ctx)
	}
	if n, err := audit.Purge(ctx, db.Client, 0, now); err != nil || n != 0 {
		t.Fatalf("retention 0 purged %d rows (%v); it must keep everything", n, err)
	}
	n, err := audit.Purge(ctx, db.Client, 24*time.Hour, now)
	if err != nil || n != 1 {
		t.Fatalf("purged %d rows (%v), want the one older than 24h", n, err)
	}
	if left := db.Client.AuditLog.Query().CountX(ctx); left != 2 {
		t.Errorf("%d rows left, want 2", left)
	}
}
