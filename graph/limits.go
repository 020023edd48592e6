package graph

import (
	"context"
	"fmt"

	"entgo.io/contrib/entgql"
	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/virtflow/virtflow/apierr"
)

type ctxAny = context.Context

// isConnection reports whether a field's arguments are those of a Relay connection.
func isConnection(args map[string]any) bool {
	_, first := args["first"]
	_, last := args["last"]
	return first && last
}

// pageLimits applies the page-size rules to every connection field, top-level or nested:
// without first or last the connection returns defaultPage items; more than maxPage is refused
// with a VALIDATION error naming the argument.
func pageLimits(defaultPage, maxPage int) graphql.FieldMiddleware {
	return func(ctx context.Context, next graphql.Resolver) (any, error) {
		fc := graphql.GetFieldContext(ctx)
		if fc == nil || !isConnection(fc.Args) {
			return next(ctx)
		}
		first, _ := fc.Args["first"].(*int)
		last, _ := fc.Args["last"].(*int)
		for name, v := range map[string]*int{"first": first, "last": last} {
			if v != nil && (*v < 0 || *v > maxPage) {
				return nil, apierr.Validation(name, "must be between 0 and %d", maxPage)
			}
		}
		if first == nil && last == nil {
			n := defaultPage
			// Paging backwards from a cursor takes the last items before it.
			if before, _ := fc.Args["before"].(*entgql.Cursor[int]); before != nil {
				fc.Args["last"] = &n
			} else {
				fc.Args["first"] = &n
			}
		}
		return next(ctx)
	}
}

// pagedComplexity estimates a connection's cost as its page size times the cost of its
// selection, so `racks { hosts { ports } }` costs what it may return.
type pagedComplexity struct {
	graphql.ExecutableSchema
	defaultPage int
}

// Complexity implements graphql.ExecutableSchema.
func (p pagedComplexity) Complexity(ctx context.Context, typeName, field string, child int, args map[string]any) (int, bool) {
	if c, ok := p.ExecutableSchema.Complexity(ctx, typeName, field, child, args); ok && !isConnection(args) {
		return c, true
	}
	if !isConnection(args) {
		return 0, false
	}
	n := p.defaultPage
	for _, k := range []string{"first", "last"} {
		if v, ok := args[k].(*int); ok && v != nil {
			n = *v
		}
	}
	if n < 1 {
		n = 1
	}
	return 1 + child*n, true
}

// depthLimit refuses operations nested deeper than max. Depth counts hops through the graph:
// the Relay wrappers `edges` and `node` of a connection are not hops of their own, so
// regions → datacenters → floors → racks → hosts → ports is six levels however it is spelled.
// Introspection fields (__schema, __type) are not counted, so GraphiQL's schema query passes.
// The complexity limit, not depth, is what bounds the cost of an operation.
type depthLimit struct{ max int }

var (
	_ graphql.HandlerExtension        = depthLimit{}
	_ graphql.OperationContextMutator = depthLimit{}
)

// ExtensionName implements graphql.HandlerExtension.
func (depthLimit) ExtensionName() string { return "DepthLimit" }

// Validate implements graphql.HandlerExtension.
func (d depthLimit) Validate(graphql.ExecutableSchema) error {
	if d.max < 1 {
		return fmt.Errorf("depth limit must be at least 1")
	}
	return nil
}

// MutateOperationContext implements graphql.OperationContextMutator.
func (d depthLimit) MutateOperationContext(_ context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil {
		return nil
	}
	if depth := selectionDepth(oc.Operation.SelectionSet, map[string]bool{}); depth > d.max {
		err := gqlerror.Errorf("operation is nested %d levels deep; the limit is %d", depth, d.max)
		err.Extensions = map[string]any{"code": string(apierr.CodeValidation)}
		return err
	}
	return nil
}

func selectionDepth(set ast.SelectionSet, visiting map[string]bool) int {
	deepest := 0
	for _, sel := range set {
		var d int
		switch s := sel.(type) {
		case *ast.Field:
			switch {
			case len(s.Name) > 1 && s.Name[:2] == "__":
				continue
			case s.Name == "edges" || s.Name == "node":
				d = selectionDepth(s.SelectionSet, visiting)
			default:
				d = 1 + selectionDepth(s.SelectionSet, visiting)
			}
		case *ast.InlineFragment:
			d = selectionDepth(s.SelectionSet, visiting)
		case *ast.FragmentSpread:
			if s.Definition == nil || visiting[s.Name] {
				continue
			}
			visiting[s.Name] = true
			d = selectionDepth(s.Definition.SelectionSet, visiting)
			delete(visiting, s.Name)
		}
		deepest = max(deepest, d)
	}
	return deepest
}
