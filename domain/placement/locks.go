package placement

import (
	"context"
	"fmt"
	"sync"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/quota"
	"github.com/virtflow/virtflow/ent/regionservice"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// Row classes in lock order: every transaction that writes several of these rows takes
// them in this order (and by ascending id within a class), so no two wait for each other
// in a cycle.
const (
	classService = iota // region_services
	classVM             // virtual_machines
	classNode           // compute_nodes
	classQuota          // quota
)

// rowKey is a row in the global lock order.
type rowKey struct {
	class int
	id    int
}

func (a rowKey) less(b rowKey) bool {
	return a.class < b.class || (a.class == b.class && a.id < b.id)
}

// lockSet is the rows one transaction holds locks on, as far as placement knows: the rows
// it updated or selected for update. It is only ever used by the goroutine running the
// transaction.
type lockSet struct {
	held map[rowKey]bool
	max  rowKey
	any  bool
}

func newLockSet() *lockSet { return &lockSet{held: map[rowKey]bool{}} }

// hold records that the transaction holds k.
func (l *lockSet) hold(k rowKey) {
	l.held[k] = true
	if !l.any || l.max.less(k) {
		l.max, l.any = k, true
	}
}

// wrote reports whether the transaction holds a node or quota row: it wrote one (and may
// have put it back).
func (l *lockSet) wrote() bool {
	for k := range l.held {
		if k.class == classNode || k.class == classQuota {
			return true
		}
	}
	return false
}

// outOfOrder reports whether taking k now would wait against the lock order: the
// transaction already holds a row that comes after k.
func (l *lockSet) outOfOrder(k rowKey) bool {
	return l.any && !l.held[k] && k.less(l.max)
}

// txLocks keeps the lockSet of each open GraphQL transaction, so that the placements of
// several fields of one mutation share it. Entries go when the transaction ends.
var txLocks sync.Map // *ent.Tx → *lockSet

// locksOf returns the lockSet of tx, creating it (and its cleanup) on first use.
func locksOf(tx *ent.Tx) *lockSet {
	if l, ok := txLocks.Load(tx); ok {
		return l.(*lockSet)
	}
	l := newLockSet()
	txLocks.Store(tx, l)
	forget := func() { txLocks.Delete(tx) }
	tx.OnCommit(func(next ent.Committer) ent.Committer {
		return ent.CommitFunc(func(ctx context.Context, tx *ent.Tx) error {
			defer forget()
			return next.Commit(ctx, tx)
		})
	})
	tx.OnRollback(func(next ent.Rollbacker) ent.Rollbacker {
		return ent.RollbackFunc(func(ctx context.Context, tx *ent.Tx) error {
			defer forget()
			return next.Rollback(ctx, tx)
		})
	})
	return l
}

// lockRow locks k for the rest of the transaction (SELECT … FOR UPDATE; nothing on
// SQLite, whose writers are serialized anyway) and reports whether the row exists. Taken
// in order it waits for a concurrent holder; out of order it only takes the row if it is
// free at once (SKIP LOCKED) and otherwise reports busy, and the caller tries again later.
func (t *txn) lockRow(ctx context.Context, k rowKey) (exists, busy bool, err error) {
	skip := t.locks.outOfOrder(k)
	ids, err := t.selectRow(ctx, k, func(s *sql.Selector) {
		if s.Dialect() == dialect.SQLite {
			return
		}
		strength := sql.LockNoKeyUpdate
		if k.class == classService {
			strength = sql.LockUpdate
		}
		if skip {
			s.For(strength, sql.WithLockAction(sql.SkipLocked))
		} else {
			s.For(strength)
		}
	})
	switch {
	case err != nil:
		return false, false, fmt.Errorf("lock row %d of class %d: %w", k.id, k.class, err)
	case len(ids) > 0:
		t.locks.hold(k)
		return true, false, nil
	case !skip:
		return false, false, nil
	}
	// Skipped: held by another transaction, or gone.
	if ids, err = t.selectRow(ctx, k, func(*sql.Selector) {}); err != nil {
		return false, false, fmt.Errorf("look up row %d of class %d: %w", k.id, k.class, err)
	}
	return len(ids) > 0, len(ids) > 0, nil
}

// selectRow selects the id of row k with a locking modifier, as the system.
func (t *txn) selectRow(ctx context.Context, k rowKey, lock func(*sql.Selector)) ([]int, error) {
	mod := func(s *sql.Selector) {
		s.Select(s.C("id"))
		lock(s)
	}
	ctx = system(ctx)
	var ids []int
	var err error
	switch k.class {
	case classService:
		err = t.c.RegionService.Query().Where(regionservice.ID(k.id)).Modify(mod).Scan(ctx, &ids)
	case classVM:
		err = t.c.VirtualMachine.Query().Where(virtualmachine.ID(k.id)).Modify(mod).Scan(ctx, &ids)
	case classNode:
		err = t.c.ComputeNode.Query().Where(computenode.ID(k.id)).Modify(mod).Scan(ctx, &ids)
	case classQuota:
		err = t.c.Quota.Query().Where(quota.ID(k.id)).Modify(mod).Scan(ctx, &ids)
	default:
		err = fmt.Errorf("unknown row class %d", k.class)
	}
	return ids, err
}

// prepareWrite makes writing row k safe for the lock order: out of order, it takes the
// row's lock without waiting first, and reports busy when it cannot.
func (t *txn) prepareWrite(ctx context.Context, k rowKey) (busy bool, err error) {
	if !t.locks.outOfOrder(k) {
		return false, nil
	}
	// A missing row updates nothing: the caller sees 0 rows.
	_, busy, err = t.lockRow(ctx, k)
	return busy, err
}
