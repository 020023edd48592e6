// Package graph is VirtFlow's GraphQL layer: the gqlgen resolvers over the ent graph. Resolvers
// are thin — one ent call or one call into a domain package — and return errors for the error
// presenter (package graph/gqlerr) to map to extensions.code.
package graph

import (
	"context"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/virtflow/virtflow/controllers/kubecluster"
	"github.com/virtflow/virtflow/controllers/provision"
	"github.com/virtflow/virtflow/domain/identity"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/graph/generated"
	"github.com/virtflow/virtflow/graph/gqlerr"
)

// Resolver is the root resolver; it holds the dependencies the resolvers need.
type Resolver struct {
	client    *ent.Client
	identity  *identity.Service
	provision *provision.Service
	kube      *kubecluster.Service
	now       func() time.Time
	requestID gqlerr.RequestIDFunc
}

// NewSchema builds the executable GraphQL schema over an ent client and the identity service,
// with the provisioning service and clock of DefaultOptions (tests that only need the schema).
func NewSchema(client *ent.Client, ids *identity.Service) graphql.ExecutableSchema {
	opts := DefaultOptions()
	opts.Identity = ids
	return newSchema(client, opts)
}

// newSchema builds the executable schema over client with the services of opts; a nil
// Provision or Clock takes DefaultOptions'.
func newSchema(client *ent.Client, opts Options) graphql.ExecutableSchema {
	r := &Resolver{client: client, identity: opts.Identity, provision: opts.Provision, now: opts.Clock, requestID: opts.RequestID}
	if r.provision == nil {
		r.provision = provision.New(provision.Config{Clock: opts.Clock})
	}
	if r.now == nil {
		r.now = time.Now
	}
	r.kube = opts.Kubernetes
	if r.kube == nil {
		r.kube = kubecluster.New(kubecluster.Config{Client: client, Provision: r.provision})
	}
	if r.requestID == nil {
		r.requestID = func(context.Context) string { return "" }
	}
	if opts.StockExecutor != nil {
		return opts.StockExecutor(r)
	}
	cfg := generated.Config{Resolvers: r}
	cfg.Complexity.Query.NetworkDiagram = NetworkDiagramComplexity
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
