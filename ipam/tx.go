package ipam

import (
	"context"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/fabric"
)

// inTx runs fn with a transactional client, joining the caller's transaction when there is
// one: the transaction ctx carries (ent.NewTxContext; every GraphQL mutation runs in one, see
// graph/tx.go), else client itself when it is a transaction's client, else a new transaction
// that commits when fn succeeds and rolls back when it fails. Joining means the caller's
// commit or rollback decides, and the row locks taken by fn last until then.
func inTx(ctx context.Context, client *ent.Client, fn func(*ent.Client) error) error {
	if tx := ent.TxFromContext(ctx); tx != nil {
		return fn(tx.Client())
	}
	_, err := fabric.InTx(ctx, client, fn)
	return err
}

// reader returns the client to read with: the transaction's when ctx carries one, so that a
// mutation's answer (allocateIPAddress { network { utilization } }) counts the mutation's own
// uncommitted changes, and client otherwise.
func reader(ctx context.Context, client *ent.Client) *ent.Client {
	if tx := ent.TxFromContext(ctx); tx != nil {
		return tx.Client()
	}
	return client
}
