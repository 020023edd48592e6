package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
)

// selectsOnlyID reports whether the running field's result is asked for nothing but its id
// (and __typename), in every fragment whatever its type condition, so that a resolver may
// return a record holding only its ID. It is false outside a field's context.
func selectsOnlyID(ctx context.Context) bool {
	if !graphql.HasOperationContext(ctx) || graphql.GetFieldContext(ctx) == nil {
		return false
	}
	for _, f := range graphql.CollectFieldsCtx(ctx, nil) {
		if f.Name != "id" && f.Name != "__typename" {
			return false
		}
	}
	return true
}
