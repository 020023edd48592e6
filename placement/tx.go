package placement

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/lib/pq"

	"github.com/virtflow/virtflow/apierr"
	"github.com/virtflow/virtflow/ent"
)

// txn is the transaction placement works in: its client and the rows it holds locks on.
type txn struct {
	c     *ent.Client
	locks *lockSet
}

// busyAttempts bounds how often a transaction placement opens itself is run again while
// SQLite reports the database busy or locked.
const busyAttempts = 6

// inTx runs fn in the caller's transaction when client is the transactional client of the
// transaction in ctx (a GraphQL mutation's) or any other transactional client; otherwise
// in a transaction of its own, committed when fn succeeds and run again while SQLite says
// the database is busy or locked. own reports the latter: entities fn returns must then be
// unwrapped from the finished transaction.
func inTx(ctx context.Context, client *ent.Client, fn func(*txn) error) (own bool, err error) {
	if tx := ent.TxFromContext(ctx); tx != nil && ent.FromContext(ctx) == client {
		return false, fn(&txn{c: client, locks: locksOf(tx)})
	}
	for attempt := 1; ; attempt++ {
		own, err := ownTx(ctx, client, fn)
		if !own || !isBusy(err) || attempt == busyAttempts {
			return own, err
		}
		if err := sleep(ctx, attempt); err != nil {
			return own, err
		}
	}
}

func ownTx(ctx context.Context, client *ent.Client, fn func(*txn) error) (bool, error) {
	tx, err := client.Tx(ctx)
	if errors.Is(err, ent.ErrTxStarted) {
		return false, fn(&txn{c: client, locks: newLockSet()})
	}
	if err != nil {
		return true, fmt.Errorf("begin: %w", err)
	}
	if err := fn(&txn{c: tx.Client(), locks: newLockSet()}); err != nil {
		_ = tx.Rollback()
		return true, err
	}
	if err := tx.Commit(); err != nil {
		return true, fmt.Errorf("commit: %w", err)
	}
	return true, nil
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
