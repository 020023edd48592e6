package placement

import (
	"context"
	"fmt"
	"slices"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/quota"
)

// A single VM's quota usage is charged last: commit (for a create, a resize or one replica,
// whose quota has a say) reads the quota rows without locking them, screens the request against
// what it read, and leaves the charge to one conditional UPDATE per quota row just before
// the transaction's COMMIT (deferCharges). Every create of a tenant writes the same quota
// row, so the row's lock is what concurrent creates queue on: charged last, it is held
// across the UPDATE and COMMIT only, not across the VM's remaining writes, its ledger,
// outbox and audit rows. The database still decides: the UPDATE adds the usage only where
// "used + n <= limit" holds for every limit (quotaFits), after waiting for a concurrent
// holder of the row, so no interleaving lets usage past a limit; a refusal rolls the
// whole transaction back and the commit fails with QUOTA_EXCEEDED.
//
// Charges still pending when the same transaction places or releases again are applied
// first (flushCharges), so that what the transaction reads and writes next sees its own
// usage as before.

// charge is what one placement adds to one quota row at commit; reserved says the
// decision was reserved in this process's cache (withRows).
type charge struct {
	id       int
	u        quotaUsage
	reserved bool
}

// txOf returns the ent transaction t's client belongs to (every client placement writes
// with is a transaction's), nil if it is not one: the quota is then charged at once.
func (t *txn) txOf() *ent.Tx {
	tx, err := t.c.Quota.Update().Mutation().Tx()
	if err != nil {
		return nil
	}
	return tx
}

// deferCharges queues cs to be applied just before tx commits, registering the commit
// hook that applies them on the transaction's first deferred charge.
func (t *txn) deferCharges(tx *ent.Tx, cs []charge) {
	l := t.locks
	l.charges = append(l.charges, cs...)
	if l.chargeHook {
		return
	}
	l.chargeHook = true
	tx.OnCommit(func(next ent.Committer) ent.Committer {
		return ent.CommitFunc(func(ctx context.Context, tx *ent.Tx) error {
			cs := l.takeCharges()
			if len(cs) == 0 {
				return next.Commit(ctx, tx)
			}
			cc := &committing{}
			if err := applyCharges(context.WithValue(ctx, committingKey{}, cc), tx.Client(), cs); err != nil {
				rerr := tx.Rollback()
				cc.done(false)
				if rerr != nil {
					return fmt.Errorf("%w (and roll back: %v)", err, rerr)
				}
				return err
			}
			err := next.Commit(ctx, tx)
			cc.done(err == nil)
			return err
		})
	})
}

// takeCharges returns the pending charges, merged per quota row in id order (the lock
// order), and forgets them.
func (l *lockSet) takeCharges() []charge {
	cs := l.charges
	l.charges = nil
	if len(cs) < 2 {
		return cs
	}
	slices.SortStableFunc(cs, func(a, b charge) int { return a.id - b.id })
	out := cs[:1]
	for _, c := range cs[1:] {
		last := &out[len(out)-1]
		if c.id != last.id {
			out = append(out, c)
			continue
		}
		last.u.merge(c.u)
		last.reserved = last.reserved && c.reserved
	}
	return out
}

// merge adds o to u (the cores of a quota row are the same in every charge).
func (u *quotaUsage) merge(o quotaUsage) {
	u.cpu += o.cpu
	u.mem += o.mem
	u.disk += o.disk
	if o.cores > u.cores {
		u.cores = o.cores
	}
}

// flushCharges applies t's pending charges now (see the comment at the top of the file);
// their rows are then held like any other write.
func (t *txn) flushCharges(ctx context.Context) error {
	cs := t.locks.takeCharges()
	if len(cs) == 0 {
		return nil
	}
	if err := applyCharges(ctx, t.c, cs); err != nil {
		return err
	}
	for _, c := range cs {
		t.locks.hold(rowKey{classQuota, c.id})
	}
	return nil
}

// applyCharges adds each charge to its quota row in one conditional UPDATE, in id order;
// a row where it no longer fits (or that is gone) refuses with QUOTA_EXCEEDED.
func applyCharges(ctx context.Context, c *ent.Client, cs []charge) error {
	sys := system(ctx)
	for _, ch := range cs {
		u := ch.u
		n, err := c.Quota.Update().Where(quota.ID(ch.id), quotaFits(&u)).
			AddUsedVcpus(u.cpu).AddUsedMemoryMB(u.mem).AddUsedStorageGB(u.disk).
			Save(withRows(sys, ch.reserved, ch.id))
		if err != nil {
			return collision(fmt.Errorf("use quota %d: %w", ch.id, err))
		}
		if n == 0 {
			return &apierr.Error{Code: apierr.CodeQuotaExceeded,
				Message: "the last quota was taken by concurrent placements",
				Extra:   map[string]any{"reasons": map[string]any{"Quota": 1}}}
		}
	}
	return nil
}

// committingKey marks the context of the charges applied inside a commit hook. ent runs
// only the commit hooks registered before Commit began, so what a hook run by those
// UPDATEs would register (the placement cache's announcement, afterCommit) goes to the
// committing value instead, and runs once the commit is decided.
type committingKey struct{}

// committing collects what runs after a commit (onCommit) or after its refusal or failure
// (onRollback).
type committing struct {
	onCommit, onRollback []func()
}

// after registers what runs when the commit succeeds and when it does not.
func (c *committing) after(commit, rollback func()) {
	c.onCommit = append(c.onCommit, commit)
	c.onRollback = append(c.onRollback, rollback)
}

// done runs the functions of the outcome.
func (c *committing) done(committed bool) {
	fs := c.onRollback
	if committed {
		fs = c.onCommit
	}
	for _, f := range fs {
		f()
	}
}
