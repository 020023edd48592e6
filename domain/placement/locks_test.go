package placement

import (
	"testing"
	"time"

	"github.com/virtflow/virtflow/domain/placement/placementtest"
)

// TestLockOrder: a transaction never waits for a row below one it holds; it takes such a row
// only if it is free at once, and otherwise reports busy so the caller can try again.
func TestLockOrder(t *testing.T) {
	db := openPostgres(t)
	ctx, c := placementtest.Ctx(), db.Client
	s := build(t, c, placementtest.Spec{Racks: 1, HostsPerRack: 4, CPU: 8, MemoryMB: 8192, DiskGB: 100, Cores: 4})
	low, mid, high := s.Nodes[0].ID, s.Nodes[1].ID, s.Nodes[2].ID

	tx1, err := c.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx1.Rollback()
	tx2, err := c.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx2.Rollback()
	t1 := &txn{c: tx1.Client(), locks: newLockSet()}
	t2 := &txn{c: tx2.Client(), locks: newLockSet()}

	if err := t1.take(ctx, rowKey{classNode, low}); err != nil {
		t.Fatal(err)
	}
	if err := t2.take(ctx, rowKey{classNode, mid}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	exists, busy, err := t2.lockRow(ctx, rowKey{classNode, low})
	if err != nil || !exists || !busy {
		t.Fatalf("out of order on a row held elsewhere: exists %v busy %v err %v; want busy at once", exists, busy, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("out-of-order lock waited %v", d)
	}
	if busy, err := t2.prepareWrite(ctx, rowKey{classNode, low}); err != nil || !busy {
		t.Errorf("prepareWrite out of order on a held row: busy %v err %v", busy, err)
	}
	// In order, nothing to prepare; a missing row is neither busy nor there.
	if busy, err := t2.prepareWrite(ctx, rowKey{classNode, high}); err != nil || busy {
		t.Errorf("prepareWrite in order: busy %v err %v", busy, err)
	}
	if exists, busy, err := t2.lockRow(ctx, rowKey{classNode, -1}); err != nil || exists || busy {
		t.Errorf("lockRow of a missing row: exists %v busy %v err %v", exists, busy, err)
	}
	// Once the holder is done, the out-of-order row is taken without waiting.
	if err := tx1.Commit(); err != nil {
		t.Fatal(err)
	}
	if exists, busy, err := t2.lockRow(ctx, rowKey{classNode, low}); err != nil || !exists || busy {
		t.Errorf("after the holder committed: exists %v busy %v err %v", exists, busy, err)
	}
	// Quotas come after nodes, services before them.
	if !t2.locks.outOfOrder(rowKey{classService, 1}) || t2.locks.outOfOrder(rowKey{classQuota, 1}) {
		t.Errorf("class order: a service after nodes must be out of order, a quota in order")
	}
}
