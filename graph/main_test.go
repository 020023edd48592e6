package graph_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/virtflow/virtflow/graph"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// TestMain gives the package its own PostgreSQL database (dropped afterwards). All tests share
// it: every fixture name is unique (see uniq), and every assertion on a list filters on rows
// the test created, so tests neither see nor disturb each other's rows.
//
// The tests of the API surface (CRUD, validation, limits, connections, import) run in
// parallel (t.Parallel). Those that start workers on the shared Redis queues, count
// statements or audit rows beyond their own, or time requests (provisioning, placement
// races, drain, live status, onboarding) run one at a time, before them.
func TestMain(m *testing.M) { testdb.Main(m) }

// newEnv opens the package's PostgreSQL database through the real HTTP handler (migrating it
// is idempotent, so each test may do it) and returns the environment and a fixture builder.
func newEnv(t testing.TB) (*gqltest.Env, *fx) {
	t.Helper()
	env := gqltest.Postgres(t, testdb.DSN(t))
	return env, newFx(t, env)
}

var schemaOnce = sync.OnceValue(func() *ast.Schema { return graph.NewSchema(nil, nil).Schema() })

// gqlSchema is the executable schema the handler serves (graph/ent.graphqls and
// graph/types.graphqls as gqlgen compiled them).
func gqlSchema() *ast.Schema { return schemaOnce() }

// connectionField returns the Query field listing typ as a Relay connection (racks for Rack).
func connectionField(t testing.TB, typ string) *ast.FieldDefinition {
	t.Helper()
	for _, f := range gqlSchema().Query.Fields {
		if f.Type.Name() == typ+"Connection" {
			return f
		}
	}
	t.Fatalf("Query has no field returning %sConnection", typ)
	return nil
}

// list runs the Query connection field of typ with the given arguments (where, orderBy,
// first, after, last, before; nil ones are left out) and selection for each node.
func list(t testing.TB, env *gqltest.Env, typ string, args map[string]any, nodeSel string) connection {
	t.Helper()
	field := connectionField(t, typ)
	types := map[string]string{
		"where": typ + "WhereInput", "orderBy": typ + "Order",
		"first": "Int", "last": "Int", "after": "Cursor", "before": "Cursor",
	}
	var decls, uses []string
	for _, name := range []string{"where", "orderBy", "first", "after", "last", "before"} {
		if args[name] == nil {
			continue
		}
		decls = append(decls, fmt.Sprintf("$%s: %s", name, types[name]))
		uses = append(uses, fmt.Sprintf("%s: $%s", name, name))
	}
	q := fmt.Sprintf(`query%s { %s%s { totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor } edges { cursor node { id %s } } } }`,
		parens(decls), field.Name, parens(uses), nodeSel)
	var out map[string]connection
	env.MustDo(t, q, args, &out)
	return out[field.Name]
}

func parens(xs []string) string {
	if len(xs) == 0 {
		return ""
	}
	return "(" + strings.Join(xs, ", ") + ")"
}

// selectionOf builds a GraphQL selection for the keys of want: an edge, given as a map with an
// "id" key, selects `key { id }`; anything else (scalars, Labels maps) the field itself.
func selectionOf(want map[string]any) string {
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range want {
			if !yield(k) {
				return
			}
		}
	})
	var b strings.Builder
	for _, k := range keys {
		if m, ok := want[k].(map[string]any); ok && m["id"] != nil {
			fmt.Fprintf(&b, " %s { id }", k)
		} else {
			fmt.Fprintf(&b, " %s", k)
		}
	}
	return b.String()
}

// checkFields asserts that every key of want has its value in got; RFC 3339 strings compare as
// instants, numbers by value.
func checkFields(t testing.TB, what string, got, want map[string]any) {
	t.Helper()
	for k, w := range want {
		g := got[k]
		if ws, ok := w.(string); ok {
			if wt, err := time.Parse(time.RFC3339Nano, ws); err == nil {
				gs, _ := g.(string)
				gt, err := time.Parse(time.RFC3339Nano, gs)
				if err != nil || !gt.Equal(wt) {
					t.Errorf("%s: %s = %v, want %s", what, k, g, ws)
				}
				continue
			}
		}
		if !jsonEqual(g, w) {
			t.Errorf("%s: %s = %#v, want %#v", what, k, g, w)
		}
	}
}
