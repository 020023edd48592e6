package placement

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/lib/pq"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/store/dbtx"
)

// txn is the transaction placement works in: its client and the rows it holds locks on.
type txn struct {
	c     *ent.Client
	locks *lockSet
}

// busyAttempts bounds how often a transaction placement opens itself is run again while
// SQLite reports the database busy or locked.
const busyAttempts = 6

// inTx runs fn in a transaction through dbtx.Run: the caller's (a GraphQL mutation's, whose
// placements then share one lock set, or the transaction whose client is passed), or one of its
// own, committed when fn succeeds and run again while SQLite says the database is busy or
// locked. own reports the latter: entities fn returns must then be unwrapped from the finished
// transaction.
func inTx(ctx context.Context, client *ent.Client, fn func(*txn) error) (own bool, err error) {
	for attempt := 1; ; attempt++ {
		own, err := dbtx.Run(ctx, client, func(c *ent.Client) error {
			return fn(&txn{c: c, locks: locksFor(ctx, c)})
		})
		if !own || !isBusy(err) || attempt == busyAttempts {
			return own, err
		}
		if err := sleep(ctx, attempt); err != nil {
			return own, err
		}
	}
}

// locksFor returns the lock set of the transaction c belongs to: the one shared by the
// placements of a GraphQL mutation when c is that mutation's client, else a new one.
func locksFor(ctx context.Context, c *ent.Client) *lockSet {
	if tx := ent.TxFromContext(ctx); tx != nil && tx.Client() == c {
		return locksOf(tx)
	}
	return newLockSet()
}

// isBusy reports SQLite's SQLITE_BUSY and SQLITE_LOCKED (and their extended codes).
func isBusy(err error) bool {
	var coded interface{ Code() int }
	if !errors.As(err, &coded) {
		return false
	}
	switch coded.Code() & 0xff {
	case 5, 6:
		return true
	}
	return false
}

// sleep waits a little more with every attempt, with jitter so that competing
// transactions drift apart.
func sleep(ctx context.Context, attempt int) error {
	d := time.Duration(attempt) * time.Millisecond
	d += time.Duration(rand.Int64N(int64(d) + 1))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// collision maps PostgreSQL's deadlock and serialization failures, which abort the whole
// transaction, to CONFLICT: the client may simply try again.
func collision(err error) error {
	var pe *pq.Error
	if errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001") {
		return &apierr.Error{Code: apierr.CodeConflict,
			Message: "a concurrent change collided with this one; try again"}
	}
	return err
}
