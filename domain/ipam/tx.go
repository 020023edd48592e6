package ipam

import (
	"context"

	"github.com/virtflow/virtflow/ent"
)

// reader returns the client to read with: the transaction's when ctx carries one, so that a
// mutation's answer (allocateIPAddress { network { utilization } }) counts the mutation's own
// uncommitted changes, and client otherwise.
func reader(ctx context.Context, client *ent.Client) *ent.Client {
	if tx := ent.TxFromContext(ctx); tx != nil {
		return tx.Client()
	}
	return client
}
