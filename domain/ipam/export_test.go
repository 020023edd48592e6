package ipam

import (
	"context"

	"github.com/virtflow/virtflow/ent"
)

// AllocateWith is Allocate with the allocator's knobs, for tests that show what the lock and
// the retries are for: lock off, a bounded number of attempts, beforeInsert called between
// reading what is used and inserting, retried before every retry.
func AllocateWith(ctx context.Context, client *ent.Client, req Request, lock bool, attempts int, beforeInsert, retried func()) (*ent.IPAddress, error) {
	return allocator{lock: lock, attempts: attempts, beforeInsert: beforeInsert, retried: retried}.allocate(ctx, client, req)
}
