package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
)

// transactioner runs every mutation operation in one database transaction: all its fields
// commit together or, on any error, none of them does. It is entgql.Transactioner with two
// differences: a request that never became an operation (malformed JSON) passes through
// untouched, and a failure to open or commit the transaction is reported like any internal
// error — logged, and answered with the request id instead of the driver's text.
type transactioner struct {
	client *ent.Client
	opts   Options
}

var (
	_ graphql.HandlerExtension        = transactioner{}
	_ graphql.OperationContextMutator = transactioner{}
	_ graphql.ResponseInterceptor     = transactioner{}
)

// ExtensionName implements graphql.HandlerExtension.
func (transactioner) ExtensionName() string { return "Transactioner" }

// Validate implements graphql.HandlerExtension.
func (transactioner) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext serializes the fields of a mutation: they share one transaction.
func (t transactioner) MutateOperationContext(_ context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if isMutation(oc) {
		previous := oc.ResolverMiddleware
		serial := make(chan struct{}, 1)
		oc.ResolverMiddleware = func(ctx context.Context, next graphql.Resolver) (any, error) {
			serial <- struct{}{}
			defer func() { <-serial }()
			return previous(ctx, next)
		}
	}
	return nil
}

// InterceptResponse implements graphql.ResponseInterceptor.
func (t transactioner) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	if !graphql.HasOperationContext(ctx) || !isMutation(graphql.GetOperationContext(ctx)) {
		return next(ctx)
	}
	tx, err := t.client.Tx(ctx)
	if err != nil {
		return t.internal(ctx, "open transaction", err)
	}
	ctx = ent.NewTxContext(ctx, tx)
	ctx = ent.NewContext(ctx, tx.Client())
	defer func() {
		if r := recover(); r != nil {
			_ = tx.Rollback()
			panic(r)
		}
	}()
	rsp := next(ctx)
	if len(rsp.Errors) > 0 {
		_ = tx.Rollback()
		return &graphql.Response{Errors: rsp.Errors}
	}
	if err := tx.Commit(); err != nil {
		return t.internal(ctx, "commit transaction", err)
	}
	return rsp
}

func (t transactioner) internal(ctx context.Context, what string, err error) *graphql.Response {
	id := t.opts.RequestID(ctx)
	t.opts.Logger.ErrorContext(ctx, what, "err", err, "request_id", id)
	e := gqlerror.Errorf("internal error; quote request id %s to your operator", id)
	e.Extensions = map[string]any{"code": string(apierr.CodeInternal), "requestId": id}
	return &graphql.Response{Errors: gqlerror.List{e}}
}

func isMutation(oc *graphql.OperationContext) bool {
	return oc != nil && oc.Operation != nil && oc.Operation.Operation == ast.Mutation
}
