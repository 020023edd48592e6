package difftest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/virtflow/virtflow/demo"
	"github.com/virtflow/virtflow/graph"
	"github.com/virtflow/virtflow/graph/difftest/stockexec"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// stockOptions are graph.DefaultOptions serving the stock executor.
func stockOptions() graph.Options {
	opts := graph.DefaultOptions()
	opts.StockExecutor = func(r *graph.Resolver) graphql.ExecutableSchema {
		cfg := stockexec.Config{Resolvers: stockexec.Root{Resolver: r}}
		cfg.Complexity.Query.NetworkDiagram = graph.NetworkDiagramComplexity
		return stockexec.NewExecutableSchema(cfg)
	}
	return opts
}

// pair is the demo dataset loaded into two databases, one served by the rewritten executor
// (graph/generated) and one by the stock executor (stockexec): the databases start the same,
// and a mutation sent to both changes them the same way, so each operation must get the same
// answer from both.
//
// Queries are compared on one database (sameDB serves the first database with the stock
// executor): the demo loader's bulk inserts may number rows of the same kind in another
// order in the second database.
type pair struct {
	rewritten, stock *gqltest.Env
	sameDB           *gqltest.Env
	fx               *fixture
}

func newPair(t testing.TB) *pair {
	t.Helper()
	p := &pair{rewritten: gqltest.Postgres(t, testdb.New(t)), stock: gqltest.Postgres(t, testdb.New(t))}
	p.stock.Handler = gqltest.NewHandler(p.stock.DB, p.stock.Identity, stockOptions())
	p.sameDB = p.rewritten.As(gqltest.AdminToken)
	p.sameDB.Handler = gqltest.NewHandler(p.rewritten.DB, p.rewritten.Identity, stockOptions())
	for _, env := range []*gqltest.Env{p.rewritten, p.stock} {
		if _, err := demo.Load(gqltest.System(), env.Client, nil); err != nil {
			t.Fatalf("load the demo: %v", err)
		}
	}
	schema := graph.NewSchema(nil, nil).Schema()
	p.fx = &fixture{schema: schema, ids: map[string]string{}}
	for _, fd := range schema.Query.Fields {
		typ, ok := strings.CutSuffix(fd.Type.Name(), "Connection")
		if !ok || strings.HasPrefix(fd.Name, "__") {
			continue
		}
		required := false
		for _, a := range fd.Arguments {
			required = required || (a.Type.NonNull && a.DefaultValue == nil)
		}
		if required {
			continue
		}
		q := fmt.Sprintf("{ %s(first: 1) { edges { node { id } } } }", fd.Name)
		a, b := p.rewritten.Do(t, q, nil), p.stock.Do(t, q, nil)
		if len(a.Errors) > 0 || len(b.Errors) > 0 {
			t.Fatalf("%s: %s %s", q, a.ErrorsString(), b.ErrorsString())
		}
		if !bytes.Equal(a.Data, b.Data) {
			t.Fatalf("the demo differs between the databases: %s\n%s\n%s", q, a.Data, b.Data)
		}
		var page map[string]struct {
			Edges []struct{ Node struct{ ID string } }
		}
		if err := json.Unmarshal(a.Data, &page); err != nil {
			t.Fatal(err)
		}
		if edges := page[fd.Name].Edges; len(edges) > 0 {
			p.fx.ids[typ] = edges[0].Node.ID
		}
	}
	return p
}

// answer is an operation's response as compared: status, data and errors (sorted), with the
// values that differ between two runs of the same operation normalized (see normalize).
type answer struct {
	Status int
	Data   any
	Errors []any
}

func (a answer) String() string {
	b, _ := json.MarshalIndent(a, "", "  ")
	return string(b)
}

// ok reports whether the operation answered without errors.
func (a answer) ok() bool { return a.Status == http.StatusOK && len(a.Errors) == 0 }

// do sends one operation to env, as its client would (POST /query with operationName).
func do(t testing.TB, env *gqltest.Env, op operation, vars map[string]any) answer {
	t.Helper()
	body, err := json.Marshal(map[string]any{"query": op.Text, "operationName": op.Def.Name, "variables": vars})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+gqltest.AdminToken)
	rec := httptest.NewRecorder()
	env.Handler.ServeHTTP(rec, req)
	var r struct {
		Data   any   `json:"data"`
		Errors []any `json:"errors"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		t.Fatalf("%s: decode the answer (HTTP %d): %v: %s", op.Key, rec.Code, err, rec.Body.String())
	}
	a := answer{Status: rec.Code, Data: normalize("", r.Data), Errors: normalize("", r.Errors).([]any)}
	if a.Errors == nil {
		a.Errors = []any{}
	}
	sort.Slice(a.Errors, func(i, j int) bool { return fmt.Sprint(a.Errors[i]) < fmt.Sprint(a.Errors[j]) })
	return a
}

// timestamp matches the times the runs write (createdAt, updatedAt, a task's start…): the
// two databases are loaded and changed at different instants.
var timestamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$`)

// secrets are the fields whose values are random in every run (tokens and their prefixes),
// or derived from the instant of the run (cursors of lists ordered by time, the usage
// metering computes up to now): they are compared as present or absent only.
var secrets = map[string]bool{
	"token": true, "secret": true, "joinToken": true, "prefix": true,
	"cursor": true, "startCursor": true, "endCursor": true,
	"amount": true, "quantity": true, "seconds": true, "total": true,
}

// normalize replaces, in a decoded answer, the values that differ between two runs: times,
// and the values of secrets.
func normalize(key string, v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = normalize(k, e)
		}
		return v
	case []any:
		for i, e := range v {
			v[i] = normalize(key, e)
		}
		return v
	case string:
		if timestamp.MatchString(v) {
			return "<time>"
		}
		if secrets[key] && v != "" {
			return "<secret>"
		}
	case float64:
		if secrets[key] {
			return "<secret>"
		}
	}
	return v
}

// TestStockAndRewrittenAgree runs every operation of the dashboard, the node agent and
// apiclient (the CLI and the Terraform provider) through the rewritten executor and gqlgen's
// stock executor, over the demo, and compares their answers (see pair):
// first every query once, then every mutation in turn (each changes both databases the
// same way), then every query again over the changed data, sequentially and then all at
// once from several goroutines (the rewrites choose between serial and concurrent
// marshalling and share parsed arguments within an operation).
//
// Subscriptions are compared by TestSubscriptionsAgree. With -short (make test-race) the
// mutations are left out.
func TestStockAndRewrittenAgree(t *testing.T) {
	ops := operations(t)
	checkCases(t, ops)
	p := newPair(t)
	vars := map[string]map[string]any{}
	for _, op := range ops {
		v, err := p.fx.variables(op, cases[op.Key].vars)
		if err != nil {
			t.Errorf("%s: %v", op.Key, err)
		}
		vars[op.Key] = v
	}
	if t.Failed() {
		t.FailNow()
	}
	var queries []operation
	stats := map[string][2]int{}
	answered := map[string]bool{}
	compare := func(t *testing.T, op operation) answer {
		stock := p.stock
		if op.Kind == ast.Query {
			stock = p.sameDB
		}
		a, b := do(t, p.rewritten, op, vars[op.Key]), do(t, stock, op, vars[op.Key])
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: the executors disagree\nvariables: %v\nrewritten: %s\nstock: %s", op.Key, vars[op.Key], a, b)
		}
		s := stats[string(op.Kind)]
		s[0]++
		if a.ok() {
			s[1]++
		}
		stats[string(op.Kind)] = s
		if _, seen := answered[op.Key]; !seen || !a.ok() {
			answered[op.Key] = a.ok()
		}
		if cases[op.Key].ok && !a.ok() {
			t.Errorf("%s: the case should answer without errors: %s", op.Key, a)
		}
		return a
	}
	t.Run("queries", func(t *testing.T) {
		for _, op := range ops {
			if op.Kind == ast.Query {
				queries = append(queries, op)
				compare(t, op)
			}
		}
	})
	if !testing.Short() { // the short variant (make test-race) runs the queries only
		t.Run("mutations", func(t *testing.T) {
			for _, op := range ops {
				if op.Kind == ast.Mutation {
					compare(t, op)
				}
			}
		})
	}
	after := map[string]answer{}
	t.Run("queries after mutations", func(t *testing.T) {
		for _, op := range queries {
			after[op.Key] = compare(t, op)
		}
	})
	t.Run("queries concurrently", func(t *testing.T) {
		// A mismatch is asked again sequentially once all are done: the demo database may
		// have moved on since "queries after mutations" (a VM created by a mutation starts
		// being metered, say), and then the concurrent answer must equal the new one.
		type mismatch struct {
			op  operation
			env *gqltest.Env
			got answer
		}
		const rounds = 2
		var wg sync.WaitGroup
		found := make(chan mismatch, 2*rounds*len(queries))
		for range rounds {
			for _, op := range queries {
				for _, env := range []*gqltest.Env{p.rewritten, p.sameDB} {
					wg.Go(func() {
						if got := do(t, env, op, vars[op.Key]); !reflect.DeepEqual(got, after[op.Key]) {
							found <- mismatch{op: op, env: env, got: got}
						}
					})
				}
			}
		}
		wg.Wait()
		close(found)
		for m := range found {
			if now := do(t, m.env, m.op, vars[m.op.Key]); !reflect.DeepEqual(m.got, now) {
				t.Errorf("%s: concurrently: %s\nsequentially: %s", m.op.Key, m.got, now)
			}
		}
	})
	for kind, s := range stats {
		t.Logf("%s: %d compared, %d of them answered without errors", kind, s[0], s[1])
	}
	for _, op := range ops {
		if answered[op.Key] && !cases[op.Key].ok {
			t.Logf("%s answers without errors: its case may say ok", op.Key)
		}
	}
}

// checkCases fails when an operation of a client has no case, or a case no operation: a new
// operation gets compared once it says what variables it needs (usually none beyond what
// fixture derives).
func checkCases(t testing.TB, ops []operation) {
	t.Helper()
	keys := map[string]bool{}
	for _, op := range ops {
		keys[op.Key] = true
		if _, ok := cases[op.Key]; !ok {
			t.Errorf("operation %s has no case in cases (graph/difftest/cases_test.go)", op.Key)
		}
	}
	for k := range cases {
		if !keys[k] {
			t.Errorf("case %s names no operation of the dashboard, the agent or apiclient", k)
		}
	}
}
