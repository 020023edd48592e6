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
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/virtflow/virtflow/controllers/kubecluster"
	"github.com/virtflow/virtflow/controllers/provision"
	"github.com/virtflow/virtflow/domain/identity"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/gateway/livestatus"
	"github.com/virtflow/virtflow/graph/gqlerr"
	"github.com/virtflow/virtflow/graph/gqlexec"
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
	// Limits bound the text of an operation before it is validated or run (requests with a
	// token); AnonymousLimits apply to requests without one.
	Limits          Limits
	AnonymousLimits Limits
	// Introspection allows __schema and __type queries (the playground needs them).
	Introspection bool
	// Logger receives internal errors with their request ids.
	Logger *slog.Logger
	// RequestID returns the request id of a context, for error messages.
	RequestID gqlerr.RequestIDFunc
	// Identity authenticates websocket connections and serves login, tokens and roles.
	Identity *identity.Service
	// Live delivers status changes to subscriptions; without it subscriptions fail. With
	// it, websocket connections also end when their credentials are revoked or expire.
	Live *livestatus.Hub
	// CredentialRecheck is how often a websocket authenticates again without being asked to
	// (livestatus.DefaultRecheck when zero).
	CredentialRecheck time.Duration
	// Provision places VMs and region services and records their tasks (internal/app
	// constructs it from the placement settings); nil means provision.New with defaults.
	Provision *provision.Service
	// Kubernetes creates and changes Kubernetes clusters and reads their kubeconfig; nil
	// means one over Provision without a secret key (kubeconfig then fails).
	Kubernetes *kubecluster.Service
	// Clock is the time of heartbeats and drain deadlines; nil means time.Now.
	Clock func() time.Time
	// StockExecutor, when set, builds the executable schema from the root resolver in place
	// of graph/generated: the differential test (graph/difftest) sets it to gqlgen's own
	// output for the same schema, without graph/gqlgen.go's plugin and rewrite. Stock field
	// functions do not call the field middleware themselves (gqlexec.Intercept), so the
	// handler then installs it around every field with gqlgen's AroundFields.
	StockExecutor func(*Resolver) graphql.ExecutableSchema
}

// DefaultOptions are the limits VirtFlow ships with.
func DefaultOptions() Options {
	return Options{
		DefaultPageSize: 100,
		MaxPageSize:     1000,
		MaxDepth:        15,
		MaxComplexity:   250_000,
		Limits:          DefaultLimits(),
		AnonymousLimits: DefaultAnonymousLimits(),
		Introspection:   true,
		Logger:          slog.Default(),
		RequestID:       func(context.Context) string { return "" },
	}
}

// NewHandler serves GraphQL over POST, GET and websockets (graphql-transport-ws and graphql-ws,
// see websocketTransport) for an ent client: mutations run in a transaction, errors are presented with codes, and the
// page-size, depth and complexity limits of opts apply to every operation.
func NewHandler(client *ent.Client, opts Options) http.Handler {
	es := newPagedComplexity(newSchema(client, opts), opts.DefaultPageSize)
	srv := handler.New(es)
	srv.AddTransport(websocketTransport(opts))
	srv.AddTransport(transport.Options{})
	srv.AddTransport(getQuery{maxTokens: opts.Limits.MaxTokens})
	srv.AddTransport(postJSON{})
	srv.AddTransport(unsupported{}) // last: answers what no transport above takes
	if opts.Introspection {
		srv.Use(extension.Introspection{})
	}
	// Parsed and validated documents are cached by query text: dashboards repeat the same
	// queries, and parsing and validating them again cost as much as running small ones.
	srv.SetQueryCache(pageCache{lru.New[*ast.QueryDocument](1000)})
	srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](100)})
	srv.Use(newCostGuard(es.Schema(), opts.Limits, opts.AnonymousLimits))
	srv.Use(depthLimit{max: opts.MaxDepth})
	srv.Use(pageArgs{defaultPage: opts.DefaultPageSize, maxPage: opts.MaxPageSize})
	srv.Use(extension.FixedComplexityLimit(opts.MaxComplexity))
	srv.Use(transactioner{client: client, opts: opts})
	if opts.Live != nil {
		// Subscription resolvers find the process's live-status hub in their context.
		srv.AroundOperations(func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
			return next(livestatus.NewContext(ctx, opts.Live))
		})
	}
	// The field middleware runs only around the fields that need it (gqlexec.Intercept, given
	// to them by graph/gqlgen.go), not around every field as srv.AroundFields would.
	fields := fieldInterceptor(auditor{client: client, requestID: opts.RequestID})
	if opts.StockExecutor != nil {
		srv.AroundFields(fields)
	} else {
		srv.AroundOperations(func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
			return next(gqlexec.WithFieldMiddleware(ctx, fields))
		})
	}
	srv.SetErrorPresenter(gqlerr.Presenter(opts.Logger, opts.RequestID))
	srv.SetRecoverFunc(gqlerr.Recover(opts.Logger, opts.RequestID))
	return withWebsocketClose(srv)
}

var _ graphql.ExecutableSchema = pagedComplexity{}

// fieldInterceptor is the one field middleware: markResolverErrors outside whereGuard outside
// the auditor, the where guard and the auditor only on the fields they apply to — a field with
// a `where` argument, a Mutation root field. It runs around root fields, resolvers, model
// methods and fields with a `where` argument (gqlexec.Intercept); the thousands of struct
// fields of a large list, which cannot fail, run without it.
func fieldInterceptor(a auditor) graphql.FieldMiddleware {
	return func(ctx context.Context, next graphql.Resolver) (any, error) {
		fc := graphql.GetFieldContext(ctx)
		if fc != nil && (fc.Object == "Mutation" || fc.Args["where"] != nil) {
			return markResolverErrors(ctx, func(ctx context.Context) (any, error) {
				return whereGuard(ctx, func(ctx context.Context) (any, error) { return a.field(ctx, next) })
			})
		}
		return markResolverErrors(ctx, next)
	}
}

// markResolverErrors tags errors returned by resolvers so the error presenter can tell them
// from gqlgen's own (parse, validation, input coercion) errors.
func markResolverErrors(ctx context.Context, next graphql.Resolver) (any, error) {
	res, err := next(ctx)
	if err != nil {
		err = gqlerr.FromResolver(err)
	}
	return res, err
}
