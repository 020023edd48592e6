package graph

// Tests of the guardrails in limits.go: the depth limit, the paged complexity estimate and the
// page-size rules. These are internal tests (package graph) so they can reach selectionDepth
// and pagedComplexity; the checks that need data run the real handler over an embedded SQLite
// database opened with infra (gqltest cannot be used here: it imports this package).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/99designs/gqlgen/complexity"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/internal/platform/infra"
)

// parseLinked parses a query without validating it and links every fragment spread to its
// definition, as gqlgen's validator does — but also for cyclic fragments, which validation
// would reject before selectionDepth ever saw them.
func parseLinked(t *testing.T, q string) *ast.QueryDocument {
	t.Helper()
	doc, err := parser.ParseQuery(&ast.Source{Input: q})
	if err != nil {
		t.Fatalf("parse %q: %v", q, err)
	}
	var link func(ast.SelectionSet)
	link = func(set ast.SelectionSet) {
		for _, sel := range set {
			switch s := sel.(type) {
			case *ast.Field:
				link(s.SelectionSet)
			case *ast.InlineFragment:
				link(s.SelectionSet)
			case *ast.FragmentSpread:
				s.Definition = doc.Fragments.ForName(s.Name)
			}
		}
	}
	for _, op := range doc.Operations {
		link(op.SelectionSet)
	}
	for _, f := range doc.Fragments {
		link(f.SelectionSet)
	}
	return doc
}

func TestSelectionDepth(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		query string
		want  int
	}{
		{"one field", `{ a }`, 1},
		{"nested fields", `{ a { b { c } } }`, 3},
		{"deepest branch wins", `{ a { b } c { d { e { f } } } g }`, 4},
		{"named fragment counts its fields", `{ a { ...F } } fragment F on T { b { c } }`, 3},
		{"fragment at top level", `{ ...F } fragment F on Query { a { b } }`, 2},
		{"inline fragment adds no level", `{ a { ... on T { b { c } } } }`, 3},
		{"nested inline fragments add no level", `{ a { ... on T { ... on U { ... { b } } } } }`, 2},
		{"__typename is not counted", `{ a { b { __typename } } }`, 2},
		{"__schema is not counted", `{ __schema { types { fields { type { ofType { ofType { ofType { name } } } } } } } }`, 0},
		{"__type beside a real field", `{ __type(name: "Rack") { fields { type { name } } } a { b } }`, 2},
		{"self-recursive fragment stops", `{ a { ...F } } fragment F on T { b { ...F } }`, 2},
		{"mutually recursive fragments stop", `{ a { ...F } } fragment F on T { b { ...G } } fragment G on T { c { ...F } }`, 3},
		{"same fragment in siblings counted in both", `{ a { ...F } b { c { ...F } } } fragment F on T { x { y } }`, 4},
		{"same fragment twice in one set", `{ a { ...F ...F } } fragment F on T { x { y } }`, 3},
		{"undefined fragment is ignored", `{ a { ...Missing b } }`, 2},
		{"empty selection", `{ __typename }`, 0},
		{"Relay edges and node are not levels", `{ racks { edges { node { floor { id } } } } }`, 3},
		{"edges and node inside a fragment", `{ racks { ...C } } fragment C on RackConnection { edges { node { name } } }`, 2},
		{"totalCount is a level", `{ racks { totalCount } }`, 2},
		{"pageInfo is a level", `{ racks { pageInfo { hasNextPage } } }`, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := parseLinked(t, tt.query)
			if got := selectionDepth(doc.Operations[0].SelectionSet, map[string]bool{}); got != tt.want {
				t.Errorf("selectionDepth(%s) = %d, want %d", tt.query, got, tt.want)
			}
		})
	}
}

func TestSelectionDepthLeavesVisitingEmpty(t *testing.T) {
	t.Parallel()
	doc := parseLinked(t, `{ a { ...F } } fragment F on T { b { ...G } } fragment G on T { c { ...F } }`)
	visiting := map[string]bool{}
	selectionDepth(doc.Operations[0].SelectionSet, visiting)
	if len(visiting) != 0 {
		t.Errorf("visiting after the walk = %v, want empty (a fragment left marked would hide later uses)", visiting)
	}
}

func TestPageArgsValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		def, max int
		ok       bool
	}{{100, 1000, true}, {1, 1, true}, {0, 1000, false}, {-1, 10, false}, {100, 99, false}} {
		err := pageArgs{defaultPage: tc.def, maxPage: tc.max}.Validate(nil)
		if (err == nil) != tc.ok {
			t.Errorf("pageArgs{default %d, max %d}.Validate = %v, want ok=%v", tc.def, tc.max, err, tc.ok)
		}
	}
}

func TestDepthLimitValidate(t *testing.T) {
	t.Parallel()
	for _, max := range []int{-1, 0} {
		if err := (depthLimit{max: max}).Validate(nil); err == nil {
			t.Errorf("depthLimit{max: %d}.Validate = nil, want an error", max)
		}
	}
	if err := (depthLimit{max: 1}).Validate(nil); err != nil {
		t.Errorf("depthLimit{max: 1}.Validate = %v, want nil", err)
	}
}

// deepQuery builds a valid query exactly depth (≥ 2) levels deep as selectionDepth counts them
// (hops through the graph; the Relay wrappers edges and node are not levels):
// racks { edges { node { floor { racks { edges { node { … id } } } } } } }.
func deepQuery(depth int) string {
	var b strings.Builder
	closing := 0
	for i := 0; i < depth-1; i++ {
		if i%2 == 0 {
			b.WriteString("racks(first: 1) { edges { node { ")
			closing += 3
		} else {
			b.WriteString("floor { ")
			closing++
		}
	}
	return "{ " + b.String() + "id" + strings.Repeat(" }", closing) + " }"
}

func TestDeepQueryHelper(t *testing.T) {
	t.Parallel()
	schema := NewSchema(nil, nil).Schema()
	for _, d := range []int{2, 3, 4, 5, 8, 15, 16, 20} {
		q := deepQuery(d)
		doc, errs := gqlparser.LoadQueryWithRules(schema, q, nil)
		if errs != nil {
			t.Fatalf("deepQuery(%d) is not a valid query: %v\n%s", d, errs, q)
		}
		if got := selectionDepth(doc.Operations[0].SelectionSet, map[string]bool{}); got != d {
			t.Fatalf("deepQuery(%d) has depth %d: %s", d, got, q)
		}
	}
}

// testServer is the GraphQL handler over a fresh embedded SQLite database.
type testServer struct {
	client  *ent.Client
	handler http.Handler
}

func newTestServer(t *testing.T, opts Options) *testServer {
	t.Helper()
	db, err := infra.OpenDatabase(authz.SystemContext(context.Background(), "test"), "", t.TempDir())
	if err != nil {
		t.Fatalf("open database: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	return &testServer{client: db.Client, handler: NewHandler(db.Client, opts)}
}

type gqlError struct {
	Message    string         `json:"message"`
	Extensions map[string]any `json:"extensions"`
}

type gqlResponse struct {
	Status int
	Data   json.RawMessage `json:"data"`
	Errors []gqlError      `json:"errors"`
}

func (s *testServer) do(t *testing.T, query string, vars map[string]any) gqlResponse {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req = req.WithContext(authz.SystemContext(req.Context(), "test"))
	rec := httptest.NewRecorder()
	s.handler.ServeHTTP(rec, req)
	var r gqlResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		t.Fatalf("decode response (HTTP %d): %v: %s", rec.Code, err, rec.Body.String())
	}
	r.Status = rec.Code
	return r
}

func (s *testServer) mustDo(t *testing.T, query string, vars map[string]any, out any) {
	t.Helper()
	r := s.do(t, query, vars)
	if len(r.Errors) > 0 {
		t.Fatalf("unexpected errors %+v\nquery: %s", r.Errors, query)
	}
	if err := json.Unmarshal(r.Data, out); err != nil {
		t.Fatalf("decode data: %v: %s", err, r.Data)
	}
}

// expectError asserts the first error has code and, when field is not empty, field.
func (r gqlResponse) expectError(t *testing.T, code, field string) gqlError {
	t.Helper()
	if len(r.Errors) == 0 {
		t.Fatalf("expected error %s (field %q), got data %s", code, field, r.Data)
	}
	e := r.Errors[0]
	if e.Extensions["code"] != code || (field != "" && e.Extensions["field"] != field) {
		t.Fatalf("expected error %s (field %q), got %+v", code, field, r.Errors)
	}
	return e
}

func TestDepthLimitThroughHandler(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, DefaultOptions())
	if DefaultOptions().MaxDepth != 15 {
		t.Fatalf("DefaultOptions().MaxDepth = %d; this test assumes 15", DefaultOptions().MaxDepth)
	}
	// The same 16 levels, 15 of them inside a fragment on the connection.
	inner := strings.TrimSuffix(strings.TrimPrefix(deepQuery(16), "{ racks(first: 1) { "), " } }")
	frag16 := `query { racks { ...R } } fragment R on RackConnection { ` + inner + ` }`

	tests := []struct {
		name    string
		query   string
		refused bool
	}{
		{"depth 15 is allowed", deepQuery(15), false},
		{"depth 16 is refused", deepQuery(16), true},
		{"depth 20 is refused", deepQuery(20), true},
		{"depth 16 hidden in a fragment is refused", frag16, true},
		{"deep introspection passes", `{ __schema { types { fields { type { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { name } } } } } } } } } } } } } } } } } } }`, false},
		{"__typename at level 16 is not counted", strings.Replace(deepQuery(16), "{ id }", "{ __typename }", 1), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(t, tt.query, nil)
			if !tt.refused {
				if len(r.Errors) > 0 {
					t.Fatalf("unexpected errors %+v\nquery: %s", r.Errors, tt.query)
				}
				return
			}
			e := r.expectError(t, "VALIDATION", "")
			if !strings.Contains(e.Message, "limit is 15") {
				t.Errorf("message %q does not state the limit", e.Message)
			}
			if len(r.Data) > 0 && string(r.Data) != "null" {
				t.Errorf("refused operation returned data %s", r.Data)
			}
		})
	}

	// A query whose fragments form a cycle is rejected (by validation) without hanging.
	r := s.do(t, `{ racks { ...A } } fragment A on RackConnection { edges { ...B } } fragment B on RackEdge { node { floor { racks { ...A } } } }`, nil)
	if len(r.Errors) == 0 {
		t.Fatalf("cyclic fragments were accepted: %s", r.Data)
	}
}

func TestDepthLimitCustomMax(t *testing.T) {
	t.Parallel()
	opts := DefaultOptions()
	opts.MaxDepth = 3
	s := newTestServer(t, opts)
	var data struct{ Racks struct{ Edges []any } }
	s.mustDo(t, deepQuery(3), nil, &data)
	e := s.do(t, deepQuery(4), nil).expectError(t, "VALIDATION", "")
	if !strings.Contains(e.Message, "4 levels") || !strings.Contains(e.Message, "limit is 3") {
		t.Errorf("message %q, want it to name depth 4 and limit 3", e.Message)
	}
}

// complexityOf computes an operation's complexity the way gqlgen's FixedComplexityLimit does:
// through complexity.Calculate over pagedComplexity.
func complexityOf(t *testing.T, query string, vars map[string]any) int {
	t.Helper()
	es := newPagedComplexity(NewSchema(nil, nil), 100)
	doc, errs := gqlparser.LoadQueryWithRules(es.Schema(), query, nil)
	if errs != nil {
		t.Fatalf("invalid query %s: %v", query, errs)
	}
	return complexity.Calculate(authz.SystemContext(context.Background(), "test"), es, doc.Operations[0], vars)
}

func TestPagedComplexity(t *testing.T) {
	t.Parallel()
	// A connection costs 1 + page × (cost of its selection). With first: 1 the page is one
	// item, so cost(first: n) = 1 + n × (cost(first: 1) − 1).
	sel := `{ edges { node { id name } } totalCount }`
	one := complexityOf(t, `{ racks(first: 1) `+sel+` }`, nil)
	child := one - 1
	if child < 1 {
		t.Fatalf("cost(first: 1) = %d; want at least 2", one)
	}
	perPage := func(n int) int { return 1 + n*child }

	tests := []struct {
		name  string
		query string
		vars  map[string]any
		want  int
	}{
		{"first: 10", `{ racks(first: 10) ` + sel + ` }`, nil, perPage(10)},
		{"first: 1000", `{ racks(first: 1000) ` + sel + ` }`, nil, perPage(1000)},
		{"last: 7", `{ racks(last: 7) ` + sel + ` }`, nil, perPage(7)},
		{"no first or last costs the default page", `{ racks ` + sel + ` }`, nil, perPage(100)},
		{"first from a variable", `query($n: Int) { racks(first: $n) ` + sel + ` }`, map[string]any{"n": 10}, perPage(10)},
		{"first: 0 costs at least one item", `{ racks(first: 0) ` + sel + ` }`, nil, perPage(1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := complexityOf(t, tt.query, tt.vars); got != tt.want {
				t.Errorf("complexity = %d, want %d (1 + page × %d)", got, tt.want, child)
			}
		})
	}

	t.Run("nested connections multiply", func(t *testing.T) {
		outer := complexityOf(t, `{ racks(first: 10) { edges { node { hosts(first: 10) { totalCount } } } } }`, nil)
		if outer < 10*10 {
			t.Errorf("racks(first: 10) { hosts(first: 10) } costs %d, want at least 100", outer)
		}
		big := complexityOf(t, `{ racks(first:1000){edges{node{hosts(first:1000){edges{node{ports(first:1000){totalCount}}}}}}} }`, nil)
		if max := DefaultOptions().MaxComplexity; big <= max {
			t.Errorf("racks×hosts×ports with first: 1000 each costs %d, want more than the limit %d", big, max)
		}
	})

	t.Run("non-connection fields keep the default cost", func(t *testing.T) {
		if got := complexityOf(t, `{ node(id: "1") { id } }`, nil); got != 2 {
			t.Errorf("node(id) { id } costs %d, want 2", got)
		}
	})
}

// TestPagedComplexityDirect calls Complexity with the parsed argument form (*int values, every
// argument present) that resolvers see.
func TestPagedComplexityDirect(t *testing.T) {
	t.Parallel()
	es := newPagedComplexity(NewSchema(nil, nil), 100)
	ten, five := 10, 5
	tests := []struct {
		name string
		args map[string]any
		want int
	}{
		{"first", map[string]any{"first": &ten, "last": (*int)(nil), "after": nil, "before": nil}, 1 + 3*10},
		{"last", map[string]any{"first": (*int)(nil), "last": &five}, 1 + 3*5},
		{"neither", map[string]any{"first": (*int)(nil), "last": (*int)(nil)}, 1 + 3*100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := es.Complexity(authz.SystemContext(context.Background(), "test"), "Query", "racks", 3, tt.args)
			if !ok || got != tt.want {
				t.Errorf("Complexity = %d, %v; want %d, true", got, ok, tt.want)
			}
		})
	}
	if _, ok := es.Complexity(authz.SystemContext(context.Background(), "test"), "Query", "node", 3, map[string]any{"id": "1"}); ok {
		t.Errorf("Complexity of a non-connection field reported ok; want the default cost")
	}
}

func TestComplexityLimitThroughHandler(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, DefaultOptions())
	q := `{ racks(first:1000){edges{node{hosts(first:1000){edges{node{ports(first:1000){totalCount}}}}}}} }`
	r := s.do(t, q, nil)
	if len(r.Errors) == 0 {
		t.Fatalf("a query that may return 10⁹ ports was executed: %s", r.Data)
	}
	if len(r.Data) > 0 && string(r.Data) != "null" {
		t.Errorf("refused operation returned data %s", r.Data)
	}
	if !strings.Contains(r.Errors[0].Message, "complexity") {
		t.Errorf("error %q does not mention complexity", r.Errors[0].Message)
	}
}

// seedRacks creates a region, datacenter and floor holding n racks named r001… and returns the
// floor id.
func seedRacks(t *testing.T, c *ent.Client, n int) int {
	t.Helper()
	ctx := authz.SystemContext(context.Background(), "test")
	reg := c.Region.Create().SetName("region1").SaveX(ctx)
	dc := c.Datacenter.Create().SetName("dc1").SetRegion(reg).SaveX(ctx)
	fl := c.Floor.Create().SetName("floor-1-1-1").SetDatacenter(dc).SaveX(ctx)
	builders := make([]*ent.RackCreate, n)
	for i := range builders {
		builders[i] = c.Rack.Create().SetName(fmt.Sprintf("r%03d", i+1)).SetFloor(fl)
	}
	c.Rack.CreateBulk(builders...).SaveX(ctx)
	return fl.ID
}

type rackConn struct {
	TotalCount int
	PageInfo   struct{ HasNextPage, HasPreviousPage bool }
	Edges      []struct {
		Cursor string
		Node   struct{ Name string }
	}
}

func (c rackConn) names() []string {
	out := make([]string, len(c.Edges))
	for i, e := range c.Edges {
		out[i] = e.Node.Name
	}
	return out
}

func TestPageLimits(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, DefaultOptions())
	seedRacks(t, s.client, 150)
	const conn = `totalCount pageInfo { hasNextPage hasPreviousPage } edges { cursor node { name } }`

	t.Run("default page when neither first nor last", func(t *testing.T) {
		var data struct{ Racks rackConn }
		s.mustDo(t, `{ racks { `+conn+` } }`, nil, &data)
		if got := len(data.Racks.Edges); got != 100 {
			t.Errorf("racks returned %d edges, want the default page of 100", got)
		}
		if data.Racks.TotalCount != 150 || !data.Racks.PageInfo.HasNextPage {
			t.Errorf("totalCount %d hasNextPage %v, want 150 true", data.Racks.TotalCount, data.Racks.PageInfo.HasNextPage)
		}
		if n := data.Racks.names(); n[0] != "r001" || n[99] != "r100" {
			t.Errorf("page runs %s…%s, want r001…r100", n[0], n[99])
		}
	})

	t.Run("default page on a nested connection", func(t *testing.T) {
		var data struct {
			Floors struct {
				Edges []struct{ Node struct{ Racks rackConn } }
			}
		}
		s.mustDo(t, `{ floors { edges { node { racks { `+conn+` } } } } }`, nil, &data)
		if len(data.Floors.Edges) != 1 {
			t.Fatalf("floors: %d edges, want 1", len(data.Floors.Edges))
		}
		racks := data.Floors.Edges[0].Node.Racks
		if len(racks.Edges) != 100 || racks.TotalCount != 150 || !racks.PageInfo.HasNextPage {
			t.Errorf("nested racks: %d edges, totalCount %d, hasNextPage %v; want 100, 150, true",
				len(racks.Edges), racks.TotalCount, racks.PageInfo.HasNextPage)
		}
	})

	t.Run("default page backwards from a cursor takes the items before it", func(t *testing.T) {
		var last struct{ Racks rackConn }
		s.mustDo(t, `{ racks(last: 1) { `+conn+` } }`, nil, &last)
		if len(last.Racks.Edges) != 1 || last.Racks.Edges[0].Node.Name != "r150" {
			t.Fatalf("racks(last: 1) = %v, want [r150]", last.Racks.names())
		}
		var data struct{ Racks rackConn }
		s.mustDo(t, `query($c: Cursor) { racks(before: $c) { `+conn+` } }`, map[string]any{"c": last.Racks.Edges[0].Cursor}, &data)
		n := data.Racks.names()
		if len(n) != 100 || n[0] != "r050" || n[99] != "r149" {
			t.Errorf("racks(before: r150) = %d edges %v…, want the 100 racks r050…r149", len(n), n[:min(3, len(n))])
		}
		if !data.Racks.PageInfo.HasPreviousPage {
			t.Errorf("hasPreviousPage = false, want true (r001…r049 come before)")
		}
	})

	t.Run("null first or last gets the default page", func(t *testing.T) {
		for _, tc := range []struct {
			name, query string
			vars        map[string]any
		}{
			{"literal null", `{ racks(first: null) { ` + conn + ` } }`, nil},
			{"null variable", `query($n: Int) { racks(first: $n) { ` + conn + ` } }`, map[string]any{"n": nil}},
			{"absent variable", `query($n: Int) { racks(first: $n) { ` + conn + ` } }`, nil},
			{"both null", `{ racks(first: null, last: null) { ` + conn + ` } }`, nil},
			{"nested literal null", `{ floors { edges { node { racks(first: null) { ` + conn + ` } } } } }`, nil},
		} {
			r := s.do(t, tc.query, tc.vars)
			if len(r.Errors) > 0 {
				t.Errorf("%s: errors %+v", tc.name, r.Errors)
				continue
			}
			if n := strings.Count(string(r.Data), `"cursor"`); n != 100 {
				t.Errorf("%s: %d edges, want the default page of 100", tc.name, n)
			}
		}
	})

	t.Run("the same query twice gets the same page", func(t *testing.T) {
		// The default is written into the parsed operation; a second request must not see a
		// document changed by the first.
		for i := 0; i < 3; i++ {
			var data struct{ Racks rackConn }
			s.mustDo(t, `{ racks { `+conn+` } }`, nil, &data)
			if len(data.Racks.Edges) != 100 {
				t.Fatalf("request %d: %d edges, want 100", i+1, len(data.Racks.Edges))
			}
		}
	})

	t.Run("a variable defaulted in one request is the caller's in the next", func(t *testing.T) {
		// Documents are cached by their text: the default for an absent variable must go into
		// that request's variables, never into the shared document.
		q := `query($n: Int) { racks(first: $n) { ` + conn + ` } }`
		for i, tc := range []struct {
			vars map[string]any
			want int
		}{{nil, 100}, {map[string]any{"n": 3}, 3}, {nil, 100}, {map[string]any{"n": 7}, 7}} {
			var data struct{ Racks rackConn }
			s.mustDo(t, q, tc.vars, &data)
			if len(data.Racks.Edges) != tc.want {
				t.Errorf("request %d with %v: %d edges, want %d", i+1, tc.vars, len(data.Racks.Edges), tc.want)
			}
		}
	})

	t.Run("one text pages forward in one request and backward in the next", func(t *testing.T) {
		// Whether the default is first or last depends on this request's variables; deciding it
		// in the cached document would make the next request with the same text page backwards.
		var last struct{ Racks rackConn }
		s.mustDo(t, `{ racks(last: 1) { `+conn+` } }`, nil, &last)
		q := `query($c: Cursor) { racks(before: $c) { ` + conn + ` } }`
		for i, tc := range []struct {
			vars        map[string]any
			first, last string
		}{
			{nil, "r001", "r100"},
			{map[string]any{"c": last.Racks.Edges[0].Cursor}, "r050", "r149"},
			{nil, "r001", "r100"},
		} {
			var data struct{ Racks rackConn }
			s.mustDo(t, q, tc.vars, &data)
			n := data.Racks.names()
			if len(n) != 100 || n[0] != tc.first || n[99] != tc.last {
				t.Errorf("request %d with %v: %d edges %v…, want %s…%s", i+1, tc.vars, len(n), n[:min(3, len(n))], tc.first, tc.last)
			}
		}
	})

	t.Run("concurrent first requests of one text", func(t *testing.T) {
		// The first requests of a text share the document the cache publishes; run under
		// -race, this fails if any request writes to it.
		q := `query($c: Cursor) { fresh: racks(before: $c) { ` + conn + ` } }`
		var wg sync.WaitGroup
		errs := make(chan string, 16)
		for i := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body, _ := json.Marshal(map[string]any{"query": q})
				req := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req = req.WithContext(authz.SystemContext(req.Context(), "test"))
				rec := httptest.NewRecorder()
				s.handler.ServeHTTP(rec, req)
				var r struct {
					Data struct{ Fresh rackConn }
				}
				if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
					errs <- fmt.Sprintf("request %d: %v: %s", i, err, rec.Body.String())
					return
				}
				if n := r.Data.Fresh.names(); len(n) != 100 || n[0] != "r001" {
					errs <- fmt.Sprintf("request %d: %d edges starting %v, want r001…r100: %s", i, len(n), n[:min(1, len(n))], rec.Body.String())
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
	})

	t.Run("connection inside a fragment used twice", func(t *testing.T) {
		q := `{ a: floors { edges { node { ...F } } } b: floors { edges { node { ...F } } } }
fragment F on Floor { racks { totalCount edges { cursor } } }`
		r := s.do(t, q, nil)
		if len(r.Errors) > 0 {
			t.Fatalf("errors %+v", r.Errors)
		}
		if n := strings.Count(string(r.Data), `"cursor"`); n != 200 {
			t.Errorf("%d edges over both aliases, want 2 × 100", n)
		}
	})

	t.Run("explicit page sizes", func(t *testing.T) {
		for _, tc := range []struct {
			args string
			want int
		}{{"first: 1000", 150}, {"first: 7", 7}, {"last: 3", 3}, {"first: 0", 0}} {
			var data struct{ Racks rackConn }
			s.mustDo(t, `{ racks(`+tc.args+`) { `+conn+` } }`, nil, &data)
			if len(data.Racks.Edges) != tc.want {
				t.Errorf("racks(%s): %d edges, want %d", tc.args, len(data.Racks.Edges), tc.want)
			}
		}
	})

	refused := []struct {
		name, query string
		vars        map[string]any
		field       string
	}{
		{"first over the maximum", `{ racks(first: 1001) { totalCount } }`, nil, "first"},
		{"last over the maximum", `{ racks(last: 1001) { totalCount } }`, nil, "last"},
		{"negative last", `{ racks(last: -1) { totalCount } }`, nil, "last"},
		{"negative first", `{ racks(first: -5) { totalCount } }`, nil, "first"},
		{"first from a variable", `query($n: Int) { racks(first: $n) { totalCount } }`, map[string]any{"n": 5000}, "first"},
		{"nested connection", `{ floors { edges { node { racks(first: 1001) { totalCount } } } } }`, nil, "first"},
	}
	for _, tt := range refused {
		t.Run("refused: "+tt.name, func(t *testing.T) {
			r := s.do(t, tt.query, tt.vars)
			e := r.expectError(t, "VALIDATION", tt.field)
			if !strings.Contains(e.Message, tt.field) || !strings.Contains(e.Message, "1000") {
				t.Errorf("message %q should name %s and the maximum 1000", e.Message, tt.field)
			}
		})
	}
}

func TestPageLimitsCustomOptions(t *testing.T) {
	t.Parallel()
	opts := DefaultOptions()
	opts.DefaultPageSize, opts.MaxPageSize = 5, 20
	s := newTestServer(t, opts)
	seedRacks(t, s.client, 30)
	var data struct{ Racks rackConn }
	s.mustDo(t, `{ racks { totalCount edges { node { name } } } }`, nil, &data)
	if len(data.Racks.Edges) != 5 {
		t.Errorf("default page: %d edges, want 5", len(data.Racks.Edges))
	}
	s.do(t, `{ racks(first: 21) { totalCount } }`, nil).expectError(t, "VALIDATION", "first")
	s.mustDo(t, `{ racks(first: 20) { totalCount edges { node { name } } } }`, nil, &data)
	if len(data.Racks.Edges) != 20 {
		t.Errorf("first: 20: %d edges, want 20", len(data.Racks.Edges))
	}
}
