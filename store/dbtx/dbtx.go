// Package dbtx is the one way to run code in a database transaction.
//
// Every write that must be atomic goes through [Run]. It joins the transaction the caller is
// already in — a GraphQL mutation's (graph/tx.go opens one per mutation and puts it in the
// context with ent.NewTxContext), or the transaction whose client the caller passes — so that
// the caller's commit or rollback decides and row locks last until then; otherwise it opens a
// transaction of its own, commits it when fn succeeds and rolls it back when fn fails.
package dbtx

import (
	"context"
	"errors"
	"fmt"

	"github.com/virtflow/virtflow/ent"
)

// Run runs fn with a transactional client:
//
//   - the transaction ctx carries (ent.TxFromContext), when there is one;
//   - else client itself, when it is already a transaction's client;
//   - else a new transaction of client, committed when fn returns nil and rolled back when
//     it returns an error (or panics).
//
// own reports the last case: entities fn loaded through the transaction's client must then
// be unwrapped (Unwrap) before they are used to load edges, because that transaction is over.
func Run(ctx context.Context, client *ent.Client, fn func(c *ent.Client) error) (own bool, err error) {
	if tx := ent.TxFromContext(ctx); tx != nil {
		return false, fn(tx.Client())
	}
	tx, err := client.Tx(ctx)
	if errors.Is(err, ent.ErrTxStarted) {
		return false, fn(client)
	}
	if err != nil {
		return false, fmt.Errorf("begin transaction: %w", err)
	}
	defer func() {
		if r := recover(); r != nil {
			_ = tx.Rollback()
			panic(r)
		}
	}()
	if err := fn(tx.Client()); err != nil {
		if rerr := tx.Rollback(); rerr != nil {
			return true, fmt.Errorf("%w (and roll back: %v)", err, rerr)
		}
		return true, err
	}
	if err := tx.Commit(); err != nil {
		return true, fmt.Errorf("commit transaction: %w", err)
	}
	return true, nil
}
