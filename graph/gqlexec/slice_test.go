package gqlexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

const testSchema = `
type Query { racks: [Rack!]! node: Node }
interface Node { id: ID! }
type Rack implements Node { id: ID! name: String! hosts: [Host!]! utilization: Float! }
type Host implements Node { id: ID! name: String! load: Float! }
`

// selection parses and validates query against testSchema and returns the selection of its
// first root field.
func selection(t *testing.T, query string) ast.SelectionSet {
	t.Helper()
	schema := gqlparser.MustLoadSchema(&ast.Source{Input: testSchema})
	doc, errs := gqlparser.LoadQueryWithRules(schema, query, nil) // nil: the default rules
	if errs != nil {
		t.Fatalf("query %q: %v", query, errs)
	}
	return doc.Operations[0].SelectionSet[0].(*ast.Field).SelectionSet
}

func TestReached(t *testing.T) {
	fs := Fields{"Rack.utilization": true, "Host.load": true, "Node.load": true}
	for _, c := range []struct {
		query string
		want  bool
	}{
		{`{ racks { id name } }`, false},
		{`{ racks { id utilization } }`, true},
		{`{ racks { hosts { id name } } }`, false},
		{`{ racks { hosts { load } } }`, true},
		{`{ racks { ...R } } fragment R on Rack { name hosts { load } }`, true},
		{`{ racks { ...R } } fragment R on Rack { name }`, false},
		{`{ node { ... on Rack { utilization } } }`, true},
		{`{ node { id ... on Host { name } } }`, false},
	} {
		if got := fs.Reached(selection(t, c.query)); got != c.want {
			t.Errorf("%s: Reached = %v, want %v", c.query, got, c.want)
		}
	}
}

// elementContext runs f in a context as gqlgen's executor builds it for a list field.
func elementContext() context.Context {
	recoverFn := func(_ context.Context, err any) error { return fmt.Errorf("panic: %v", err) }
	ctx := graphql.WithResponseContext(context.Background(), graphql.DefaultErrorPresenter, recoverFn)
	return graphql.WithFieldContext(ctx, &graphql.FieldContext{Field: graphql.CollectedField{Field: &ast.Field{Alias: "racks"}}})
}

func TestMarshalSliceKeepsOrderAndIndex(t *testing.T) {
	ctx := elementContext()
	var paths []string
	ret := MarshalSlice(ctx, 3, false, func(ctx context.Context, i int) graphql.Marshaler {
		paths = append(paths, graphql.GetPath(ctx).String())
		return graphql.MarshalInt(i * 10)
	})
	var out bytes.Buffer
	ret.MarshalGQL(&out)
	if out.String() != "[0,10,20]" {
		t.Errorf("marshalled %s, want [0,10,20]", out.String())
	}
	if want := "[racks[0] racks[1] racks[2]]"; fmt.Sprint(paths) != want {
		t.Errorf("paths %v, want %s", paths, want)
	}
}

func TestMarshalSlicePanicNullsTheListWithAnError(t *testing.T) {
	ctx := elementContext()
	ret := MarshalSlice(ctx, 3, false, func(ctx context.Context, i int) graphql.Marshaler {
		if i == 1 {
			panic("boom")
		}
		return graphql.MarshalInt(i)
	})
	if ret != nil {
		t.Errorf("a panicking element left the list %v, want nil", ret)
	}
	errs := graphql.GetErrors(ctx)
	if len(errs) != 1 || errs[0].Path.String() != "racks[1]" {
		t.Errorf("errors %v, want one at racks[1]", errs)
	}
}

func TestIntercept(t *testing.T) {
	next := func(context.Context) (any, error) { return "value", nil }
	if res, err := Intercept(context.Background(), next)(context.Background()); !errors.Is(err, ErrNoMiddleware) || res != nil {
		t.Errorf("without middleware: %v, %v; want the field refused with ErrNoMiddleware", res, err)
	}
	var calls int
	mw := graphql.FieldMiddleware(func(ctx context.Context, next graphql.Resolver) (any, error) {
		calls++
		res, err := next(ctx)
		return fmt.Sprintf("<%v>", res), err
	})
	ctx := WithFieldMiddleware(context.Background(), mw)
	if res, _ := Intercept(ctx, next)(ctx); res != "<value>" || calls != 1 {
		t.Errorf("with middleware: %v after %d calls, want <value> after 1", res, calls)
	}
}

func TestObjectWritesEachNameOnce(t *testing.T) {
	field := func(alias string) graphql.CollectedField {
		return graphql.CollectedField{Field: &ast.Field{Alias: alias, Name: alias}}
	}
	o := Object(
		[]graphql.CollectedField{field("later"), field("id"), field("name"), field("id"), field("row")},
		[]graphql.Marshaler{nil, graphql.MarshalString("7"), graphql.MarshalString("r1"), graphql.MarshalString("7"), graphql.Null},
	)
	var out bytes.Buffer
	o.MarshalGQL(&out)
	if want := `{"id":"7","name":"r1","row":null}`; out.String() != want {
		t.Errorf("marshalled %s, want %s", out.String(), want)
	}
}

func TestMarkedTagsErrorsAsAResolver(t *testing.T) {
	type rack struct{ name string }
	if v, err := Marked(&rack{"r1"}, nil); err != nil || v.(*rack).name != "r1" {
		t.Errorf("Marked(value, nil) = %v, %v; want the value and no error", v, err)
	}
	cause := errors.New("database gone")
	_, err := Marked((*rack)(nil), cause)
	if !errors.Is(err, cause) || err.Error() == "" {
		t.Errorf("Marked(nil, err) = %v; want err, marked", err)
	}
	if fmt.Sprintf("%T", err) == fmt.Sprintf("%T", cause) {
		t.Errorf("Marked returned the error unmarked (%T)", err)
	}
}

// TestFieldsCacheArgs: a field's arguments are parsed once per operation and shared, unless
// they hold a `where` or `input` object, which the where guard scopes per field context.
func TestFieldsCacheArgs(t *testing.T) {
	type where struct{ Name string }
	var c FieldsCache
	parses := 0
	field := graphql.CollectedField{Field: &ast.Field{Name: "hostGroups"}}
	parse := func(args map[string]any) func() (map[string]any, error) {
		return func() (map[string]any, error) { parses++; return args, nil }
	}
	first := 10
	for range 3 {
		if _, err := c.Args(field, parse(map[string]any{"first": &first, "where": (*where)(nil)})); err != nil {
			t.Fatal(err)
		}
	}
	if parses != 1 {
		t.Fatalf("arguments without a where object parsed %d times, want once", parses)
	}
	other := graphql.CollectedField{Field: &ast.Field{Name: "maintainers"}}
	parses = 0
	for range 3 {
		args, _ := c.Args(other, parse(map[string]any{"where": &where{Name: "x"}}))
		if args["where"].(*where).Name != "x" {
			t.Fatal("where lost")
		}
	}
	if parses != 3 {
		t.Fatalf("arguments with a where object parsed %d times, want every time", parses)
	}
}
