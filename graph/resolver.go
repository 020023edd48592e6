// Package graph is VirtFlow's GraphQL layer: the gqlgen resolvers over the ent graph. Resolvers
// are thin — one ent call or one call into a domain package — and return errors for the error
// presenter (package apierr) to map to extensions.code.
package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/graph/generated"
	"github.com/virtflow/virtflow/identity"
)

// Resolver is the root resolver; it holds the dependencies the resolvers need.
type Resolver struct {
	client   *ent.Client
	identity *identity.Service
}

// NewSchema builds the executable GraphQL schema over an ent client and the identity service.
func NewSchema(client *ent.Client, ids *identity.Service) graphql.ExecutableSchema {
	cfg := generated.Config{Resolvers: &Resolver{client: client, identity: ids}}
	cfg.Complexity.Query.NetworkDiagram = networkDiagramComplexity
	return generated.NewExecutableSchema(cfg)
}

// ent returns the client of the transaction entgql.Transactioner opened for this mutation, or
// the root client outside one.
func (r *Resolver) ent(ctx context.Context) *ent.Client {
	if c := ent.FromContext(ctx); c != nil {
		return c
	}
	return r.client
}
