// Package gqlexec holds the hand-written helpers the generated executable schema
// (graph/generated) calls where graph/gqlgen.go generates other code than gqlgen's own: lists
// of objects marshalled in one goroutine when nothing in their selection does I/O.
package gqlexec

import (
	"context"
	"errors"
	"io"
	"reflect"
	"sync"
	"unsafe"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/virtflow/virtflow/graph/gqlerr"
)

// Fields is a set of "Type.field" names: the fields gqlgen resolves in a goroutine of their
// own (resolvers, and ent edge methods on types that have resolvers), for which a list's
// elements are worth marshalling concurrently.
type Fields map[string]bool

// Reached reports whether the selection set sel, fragments included, selects any field of fs
// at any depth. Fields selected through an interface are named by the interface, which fs
// lists when any implementation resolves them concurrently.
func (fs Fields) Reached(sel ast.SelectionSet) bool {
	for _, s := range sel {
		switch s := s.(type) {
		case *ast.Field:
			if s.ObjectDefinition != nil && fs[s.ObjectDefinition.Name+"."+s.Name] {
				return true
			}
			if fs.Reached(s.SelectionSet) {
				return true
			}
		case *ast.InlineFragment:
			if fs.Reached(s.SelectionSet) {
				return true
			}
		case *ast.FragmentSpread:
			if s.Definition != nil && fs.Reached(s.Definition.SelectionSet) {
				return true
			}
		}
	}
	return false
}

// MarshalSlice marshals a list element by element in the calling goroutine, as
// graphql.MarshalSliceConcurrently does with a goroutine each: every element gets a field
// context carrying its index (error paths), and a panic becomes an error on that element and
// nulls the list unless omitPanicHandler. For a list of 100 racks the goroutines and their
// stack growth were a quarter of the CPU of racks(first: 100), to copy values already in
// memory.
func MarshalSlice(ctx context.Context, length int, omitPanicHandler bool,
	marshalElement func(ctx context.Context, i int) graphql.Marshaler) graphql.Array {
	ret := make(graphql.Array, length)
	for i := range length {
		childCtx := graphql.WithFieldContext(ctx, &graphql.FieldContext{Index: &i})
		if omitPanicHandler {
			ret[i] = marshalElement(childCtx, i)
			continue
		}
		failed := false
		func() {
			defer func() {
				if r := recover(); r != nil {
					graphql.AddError(childCtx, graphql.Recover(childCtx, r))
					failed = true
				}
			}()
			ret[i] = marshalElement(childCtx, i)
		}()
		if failed {
			return nil
		}
	}
	return ret
}

// middlewareKey is the context key of the operation's field middleware.
type middlewareKey struct{}

// WithFieldMiddleware returns ctx carrying mw, the middleware Intercept runs around the fields
// that need one. The handler sets it once per operation, in place of gqlgen's field
// interceptors, which wrap every field of every object in closures.
func WithFieldMiddleware(ctx context.Context, mw graphql.FieldMiddleware) context.Context {
	return context.WithValue(ctx, middlewareKey{}, mw)
}

// ErrNoMiddleware refuses a field that needs the field middleware in an operation run
// without one (a handler other than graph.NewHandler's): the where guard and the auditor
// live in it, so such a field fails closed rather than run unguarded.
var ErrNoMiddleware = errors.New("the GraphQL handler installed no field middleware: field refused")

// Intercept is the middleware chain graph/gqlgen.go gives the fields that may fail or whose
// arguments matter — root fields, resolvers, methods of the models, fields with a `where`
// argument — and not the struct fields, which only copy a value: it runs next inside the
// operation's field middleware (WithFieldMiddleware), and refuses the field
// (ErrNoMiddleware) when the operation has none.
func Intercept(ctx context.Context, next graphql.Resolver) graphql.Resolver {
	mw, _ := ctx.Value(middlewareKey{}).(graphql.FieldMiddleware)
	if mw == nil {
		return func(context.Context) (any, error) { return nil, ErrNoMiddleware }
	}
	return func(ctx context.Context) (any, error) { return mw(ctx, next) }
}

// object is an object's result: its collected fields and their values.
type object struct {
	fields []graphql.CollectedField
	values []graphql.Marshaler
}

// Object is what a generated object marshaller returns in place of its *graphql.FieldSet
// (graph/gqlgen.go rewrites `return out`): the same JSON, written without the map of
// written names and the copy of every field that FieldSet.MarshalGQL allocates per object.
// CollectFields merges the fields of one response name, so names are unique; a repeated one
// is still written once, as FieldSet does. A field without a value (deferred with @defer)
// is left out of the payload.
func Object(fields []graphql.CollectedField, values []graphql.Marshaler) graphql.Marshaler {
	return object{fields: fields, values: values}
}

// MarshalGQL implements graphql.Marshaler.
func (o object) MarshalGQL(w io.Writer) {
	_, _ = io.WriteString(w, "{")
	first := true
	for i := range o.fields {
		if o.values[i] == nil {
			continue // deferred (@defer): delivered later, not in this payload
		}
		alias := o.fields[i].Alias
		repeated := false
		for j := range i {
			repeated = repeated || (o.fields[j].Alias == alias && o.values[j] != nil)
		}
		if repeated {
			continue
		}
		if !first {
			_, _ = io.WriteString(w, ",")
		}
		first = false
		// A response name is a GraphQL name ([_A-Za-z][_0-9A-Za-z]*): nothing to escape.
		_, _ = io.WriteString(w, `"`)
		_, _ = io.WriteString(w, alias)
		_, _ = io.WriteString(w, `":`)
		o.values[i].MarshalGQL(w)
	}
	_, _ = io.WriteString(w, "}")
}

// Marked returns a model method's result as a field resolver does, its error marked as a
// resolver's (gqlerr.FromResolver) as the field middleware would mark it: graph/gqlgen.go
// gives it to the methods without arguments (ent's edges), which need nothing else of the
// middleware.
func Marked[T any](v T, err error) (any, error) {
	if err != nil {
		return v, gqlerr.FromResolver(err)
	}
	return v, nil
}

// Edge resolves a field whose value is a model's method without arguments (an ent edge;
// graph/gqlgen.go calls it for the fields it gives Marked) as graphql.ResolveField does for
// it in a query: the field context fc (the field's path) in the children's context, a panic
// turned into an error on the field, the method's error marked as a resolver's
// (gqlerr.FromResolver) and reported at the field, the result kept in fc.Result and
// marshalled. What it leaves out is ResolveField's call through the operation's resolver
// middleware, which queries do not have, and the four closures per call that ResolveField
// allocates for it: for a list of 1,000 hosts with their racks, 4,000 allocations.
// Mutations keep graphql.ResolveField: their fields share one transaction and run one at a
// time through that middleware (graph's transactioner).
func Edge[T any](ctx context.Context, oc *graphql.OperationContext, fc *graphql.FieldContext,
	resolve func(context.Context) (T, error), marshal func(context.Context, ast.SelectionSet, T) graphql.Marshaler,
	nonNull bool) (ret graphql.Marshaler) {
	ctx = graphql.WithFieldContext(ctx, fc)
	defer func() {
		if r := recover(); r != nil {
			oc.Error(ctx, oc.Recover(ctx, r))
			ret = graphql.Null
		}
	}()
	v, err := resolve(ctx)
	if err != nil {
		oc.Error(ctx, graphql.AddFieldLocationToError(ctx, gqlerr.FromResolver(err)))
		if fc.NonNull && !nonNull {
			return graphql.RequiredNull
		}
		return graphql.Null
	}
	fc.Result = v
	return marshal(ctx, fc.Field.Selections, v)
}

// FieldsCache remembers, for one operation, the fields graphql.CollectFields collected for a
// selection set and a list of implemented types. gqlgen keeps such a cache itself, but
// builds its key with an FNV hasher and a byte slice per type name on every call, which is
// once per object of every list; this one is keyed by the two slices' addresses and
// lengths, which identify them within an operation (selection sets belong to the parsed
// query, the type lists are package variables of the generated code). Safe for the
// goroutines of one operation.
type FieldsCache struct {
	mu   sync.Mutex
	m    map[fieldsKey][]graphql.CollectedField
	args map[*ast.Field]map[string]any
}

type fieldsKey struct {
	sel       *ast.Selection
	n         int
	satisfies *string
	ns        int
}

// Collect returns graphql.CollectFields(oc, sel, satisfies), collected once per operation.
func (c *FieldsCache) Collect(oc *graphql.OperationContext, sel ast.SelectionSet, satisfies []string) []graphql.CollectedField {
	k := fieldsKey{unsafe.SliceData(sel), len(sel), unsafe.SliceData(satisfies), len(satisfies)}
	c.mu.Lock()
	fields, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return fields
	}
	fields = graphql.CollectFields(oc, sel, satisfies)
	c.mu.Lock()
	if c.m == nil {
		c.m = make(map[fieldsKey][]graphql.CollectedField)
	}
	c.m[k] = fields
	c.mu.Unlock()
	return fields
}

// Args returns the arguments of field, parsed by parse, sharing them between the objects of
// a list: a field of every element of a list has the same arguments (they come from the
// query and its variables, fixed for the operation), which gqlgen parses again for each.
// Arguments holding an input object (`where`, `input`) are never shared: the where guard
// scopes a `where` input in place, per field context.
func (c *FieldsCache) Args(field graphql.CollectedField, parse func() (map[string]any, error)) (map[string]any, error) {
	c.mu.Lock()
	args, ok := c.args[field.Field]
	c.mu.Unlock()
	if ok {
		return args, nil
	}
	args, err := parse()
	if err != nil || !absent(args["where"]) || !absent(args["input"]) {
		return args, err
	}
	c.mu.Lock()
	if c.args == nil {
		c.args = make(map[*ast.Field]map[string]any)
	}
	c.args[field.Field] = args
	c.mu.Unlock()
	return args, nil
}

// absent reports whether an argument's value is missing: nil, or a nil pointer (gqlgen
// stores an argument not given as its type's zero value).
func absent(v any) bool {
	if v == nil {
		return true
	}
	r := reflect.ValueOf(v)
	return r.Kind() == reflect.Pointer && r.IsNil()
}

// Result is the result of an object none of whose fields resolves concurrently or can be
// deferred, built by the generated marshaller in place of a *graphql.FieldSet (which it
// fills the same way, Values and Invalids) and returned as it is: one allocation per object
// where FieldSet and Object took three, the values of up to eight fields kept inline.
type Result struct {
	fields []graphql.CollectedField
	// Values are the fields' marshalled values, in the order of fields.
	Values []graphql.Marshaler
	// Invalids counts the non-null fields that came out null.
	Invalids uint32
	inline   [8]graphql.Marshaler
}

// NewResult returns the result of an object with fields.
func NewResult(fields []graphql.CollectedField) *Result {
	r := &Result{fields: fields}
	if len(fields) <= len(r.inline) {
		r.Values = r.inline[:len(fields)]
	} else {
		r.Values = make([]graphql.Marshaler, len(fields))
	}
	return r
}

// MarshalGQL implements graphql.Marshaler, as Object.
func (r *Result) MarshalGQL(w io.Writer) { object{fields: r.fields, values: r.Values}.MarshalGQL(w) }
