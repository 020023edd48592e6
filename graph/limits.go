package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/diagram"
)

// connectionFields lists, per object type, the fields that return a Relay connection.
func connectionFields(schema *ast.Schema) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for name, def := range schema.Types {
		for _, f := range def.Fields {
			if strings.HasSuffix(f.Type.Name(), "Connection") && f.Arguments.ForName("first") != nil {
				if out[name] == nil {
					out[name] = map[string]bool{}
				}
				out[name][f.Name] = true
			}
		}
	}
	return out
}

// pageArgs applies the page-size rules to every connection in an operation, top-level or
// nested, before anything runs: first or last above maxPage (or negative) is refused with a
// VALIDATION error naming the argument, and a connection asked for without either gets
// `first: defaultPage` (`last` when paging backwards with `before`).
//
// The rule has to reach the operation itself, because entgql loads nested connections eagerly
// from the query, not through their resolvers. But parsed documents are cached by query text
// and shared by concurrent requests, so a request may not write to its document: the document
// is prepared once, before the cache publishes it (pageCache), with every connection's first
// and last reading a variable, and each request only sets the variable of the argument its
// own variables leave unset, in its own variable map.
type pageArgs struct {
	defaultPage, maxPage int
}

var (
	_ graphql.HandlerExtension        = pageArgs{}
	_ graphql.OperationContextMutator = pageArgs{}
)

// ExtensionName implements graphql.HandlerExtension.
func (pageArgs) ExtensionName() string { return "PageArgs" }

// Validate implements graphql.HandlerExtension.
func (p pageArgs) Validate(graphql.ExecutableSchema) error {
	if p.defaultPage < 1 || p.maxPage < p.defaultPage {
		return fmt.Errorf("page sizes: default %d must be at least 1 and at most the maximum %d", p.defaultPage, p.maxPage)
	}
	return nil
}

// MutateOperationContext implements graphql.OperationContextMutator. It reads the shared
// document and writes only oc.Variables, which belongs to this request.
func (p pageArgs) MutateOperationContext(_ context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil {
		return nil
	}
	if oc.Variables == nil {
		oc.Variables = map[string]any{}
	}
	return walkConnections(oc.Operation.SelectionSet, map[string]bool{}, func(f *ast.Field) *gqlerror.Error {
		return p.apply(f, oc.Variables)
	})
}

// walkConnections calls fn for every field of set, nested fields and fragments included,
// that returns a Relay connection with a first argument; each fragment is visited once.
func walkConnections(set ast.SelectionSet, seen map[string]bool, fn func(*ast.Field) *gqlerror.Error) *gqlerror.Error {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if s.Definition != nil && strings.HasSuffix(s.Definition.Type.Name(), "Connection") &&
				s.Definition.Arguments.ForName("first") != nil {
				if err := fn(s); err != nil {
					return err
				}
			}
			if err := walkConnections(s.SelectionSet, seen, fn); err != nil {
				return err
			}
		case *ast.InlineFragment:
			if err := walkConnections(s.SelectionSet, seen, fn); err != nil {
				return err
			}
		case *ast.FragmentSpread:
			if s.Definition == nil || seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			if err := walkConnections(s.Definition.SelectionSet, seen, fn); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p pageArgs) apply(f *ast.Field, vars map[string]any) *gqlerror.Error {
	if given(f, "first", vars) && given(f, "last", vars) {
		e := gqlerror.Errorf("%s: first and last cannot be used together; page forward with first and after, or backward with last and before", f.Alias)
		e.Extensions = map[string]any{"code": string(apierr.CodeValidation), "field": "first", "fields": []string{"first", "last"}}
		return e
	}
	for _, name := range []string{"first", "last"} {
		arg := f.Arguments.ForName(name)
		if arg == nil {
			continue
		}
		v, err := arg.Value.Value(vars)
		if err != nil || v == nil {
			continue // null counts as not given
		}
		if n, ok := asInt(v); ok && (n < 0 || n > int64(p.maxPage)) {
			e := gqlerror.Errorf("%s: %s must be between 0 and %d", f.Alias, name, p.maxPage)
			e.Extensions = map[string]any{"code": string(apierr.CodeValidation), "field": name}
			return e
		}
		return nil
	}
	name := "first"
	if given(f, "before", vars) {
		name = "last"
	}
	arg := f.Arguments.ForName(name)
	if arg == nil || arg.Value.Kind != ast.Variable {
		// pageCache prepares every cached document; one that escaped it is refused rather
		// than run without a page size.
		e := gqlerror.Errorf("%s: the operation was not prepared for paging", f.Alias)
		e.Extensions = map[string]any{"code": string(apierr.CodeInternal)}
		return e
	}
	vars[arg.Value.Raw] = int64(p.defaultPage)
	return nil
}

// pageCache prepares each parsed and validated document for pageArgs before storing it in the
// query cache it wraps: every connection's first and last argument that the text leaves out or
// sets to a literal null is made to read a variable of its own, named after the field's
// position with a character no GraphQL variable can hold, so no operation can set it. The
// executor calls Add, and so this preparation, before it uses a document it parsed, whether
// or not the wrapped cache keeps it; documents read from the cache were prepared before they
// were published, so concurrent requests only ever read them.
type pageCache struct {
	graphql.Cache[*ast.QueryDocument]
}

var _ graphql.Cache[*ast.QueryDocument] = pageCache{}

// Add implements graphql.Cache.
func (c pageCache) Add(ctx context.Context, key string, doc *ast.QueryDocument) {
	preparePaging(doc)
	c.Cache.Add(ctx, key, doc)
}

// preparePaging rewrites doc as pageCache describes.
func preparePaging(doc *ast.QueryDocument) {
	prepare := func(f *ast.Field) *gqlerror.Error {
		for _, name := range []string{"first", "last"} {
			def := f.Definition.Arguments.ForName(name)
			if def == nil {
				continue
			}
			value := &ast.Value{
				Kind:         ast.Variable,
				Raw:          pageVariable(f, name),
				ExpectedType: def.Type,
				Position:     f.Position,
			}
			switch arg := f.Arguments.ForName(name); {
			case arg == nil:
				f.Arguments = append(f.Arguments, &ast.Argument{Name: name, Value: value, Position: f.Position})
			case arg.Value != nil && arg.Value.Kind == ast.NullValue:
				arg.Value = value
			}
		}
		return nil
	}
	for _, op := range doc.Operations {
		walkConnections(op.SelectionSet, map[string]bool{}, prepare)
	}
	for _, frag := range doc.Fragments {
		walkConnections(frag.SelectionSet, map[string]bool{}, prepare)
	}
}

// pageVariable names the variable that argument name of f reads when the text gives it no
// value. A fragment's field is one node wherever the fragment is spread, so it has one name.
func pageVariable(f *ast.Field, name string) string {
	if f.Position == nil {
		return fmt.Sprintf("page:%s:%p", name, f)
	}
	return fmt.Sprintf("page:%s:%d:%d", name, f.Position.Line, f.Position.Column)
}

func asInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case float64:
		return int64(n), true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

// pagedComplexity estimates a connection's cost as its page size times the cost of its
// selection, so `racks { hosts { ports } }` costs what it may return.
type pagedComplexity struct {
	graphql.ExecutableSchema
	defaultPage int
	connections map[string]map[string]bool
}

func newPagedComplexity(es graphql.ExecutableSchema, defaultPage int) pagedComplexity {
	return pagedComplexity{ExecutableSchema: es, defaultPage: defaultPage, connections: connectionFields(es.Schema())}
}

// Complexity implements graphql.ExecutableSchema.
func (p pagedComplexity) Complexity(ctx context.Context, typeName, field string, child int, args map[string]any) (int, bool) {
	if !p.connections[typeName][field] {
		return p.ExecutableSchema.Complexity(ctx, typeName, field, child, args)
	}
	n := int64(p.defaultPage)
	for _, k := range []string{"first", "last"} {
		if v, ok := args[k]; ok && v != nil {
			if i, ok := asInt(deref(v)); ok {
				n = i
			}
		}
	}
	if n < 1 {
		n = 1
	}
	return 1 + child*int(n), true
}

func deref(v any) any {
	if p, ok := v.(*int); ok && p != nil {
		return *p
	}
	return v
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

// NetworkDiagramComplexity counts a network diagram as the nodes it may hold: a sixth of
// diagram.MaxNodes per level of depth, so one diagram of depth 6 costs what 2,000 selected
// rows do and a thousand aliases of it are refused as too complex.
func NetworkDiagramComplexity(child, _ int, depth *int) int {
	d := diagram.DefaultDepth
	if depth != nil {
		d = min(max(*depth, 1), diagram.MaxDepth)
	}
	return 1 + child*max(diagram.MaxNodes*d/diagram.MaxDepth, 1)
}

// given reports whether argument name of f has a value other than null.
func given(f *ast.Field, name string, vars map[string]any) bool {
	arg := f.Arguments.ForName(name)
	if arg == nil {
		return false
	}
	v, err := arg.Value.Value(vars)
	return err == nil && v != nil
}
