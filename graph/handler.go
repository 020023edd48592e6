package graph

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"

	"github.com/virtflow/virtflow/apierr"
	"github.com/virtflow/virtflow/ent"
)

// Options are the guardrails and switches of the GraphQL endpoint.
type Options struct {
	// DefaultPageSize is used when a connection is asked for without first or last.
	DefaultPageSize int
	// MaxPageSize is the largest first or last a client may ask for.
	MaxPageSize int
	// MaxDepth is the deepest selection nesting allowed (introspection fields not counted).
	MaxDepth int
	// MaxComplexity bounds the estimated cost of an operation; a connection multiplies the
	// cost of its selection by its page size.
	MaxComplexity int
	// Introspection allows __schema and __type queries (the playground needs them).
	Introspection bool
	// Logger receives internal errors with their request ids.
	Logger *slog.Logger
	// RequestID returns the request id of a context, for error messages.
	RequestID apierr.RequestIDFunc
}

// DefaultOptions are the limits VirtFlow ships with.
func DefaultOptions() Options {
	return Options{
		DefaultPageSize: 100,
		MaxPageSize:     1000,
		MaxDepth:        15,
		MaxComplexity:   250_000,
		Introspection:   true,
		Logger:          slog.Default(),
		RequestID:       func(ctxAny) string { return "" },
	}
}

// NewHandler serves GraphQL over POST, GET and websockets (graphql-transport-ws and graphql-ws)
// for an ent client: mutations run in a transaction, errors are presented with codes, and the
// page-size, depth and complexity limits of opts apply to every operation.
func NewHandler(client *ent.Client, opts Options) http.Handler {
	es := newPagedComplexity(NewSchema(client), opts.DefaultPageSize)
	srv := handler.New(es)
	srv.AddTransport(transport.Websocket{KeepAlivePingInterval: 10 * time.Second, InitTimeout: 30 * time.Second})
	srv.AddTransport(transport.Options{})
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	if opts.Introspection {
		srv.Use(extension.Introspection{})
	}
	srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](100)})
	srv.Use(depthLimit{max: opts.MaxDepth})
	srv.Use(pageArgs{defaultPage: opts.DefaultPageSize, maxPage: opts.MaxPageSize})
	srv.Use(extension.FixedComplexityLimit(opts.MaxComplexity))
	srv.Use(transactioner{client: client, opts: opts})
	srv.AroundFields(markResolverErrors)
	srv.SetErrorPresenter(apierr.Presenter(opts.Logger, opts.RequestID))
	srv.SetRecoverFunc(apierr.Recover(opts.Logger, opts.RequestID))
	return srv
}

var _ graphql.ExecutableSchema = pagedComplexity{}

// markResolverErrors tags errors returned by resolvers so the error presenter can tell them
// from gqlgen's own (parse, validation, input coercion) errors.
func markResolverErrors(ctx context.Context, next graphql.Resolver) (any, error) {
	res, err := next(ctx)
	if err != nil {
		err = apierr.FromResolver(err)
	}
	return res, err
}
