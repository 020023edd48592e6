package graph_test

// Tests of the parse-time cost limits, the refusal of text PostgreSQL cannot store, and the
// codes of transport-level refusals (issue 12 items 4–6), through the real HTTP stack on
// PostgreSQL. BenchmarkRefusals measures how long each refusal takes.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/virtflow/virtflow/graph"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// fragmentBomb is `fragment F0 on Query { a0: me { id } ...F1 ...F1 }` through F<levels-1>:
// 1.3 kB of text that expands to 2^levels spreads.
func fragmentBomb(levels int) string {
	var b strings.Builder
	b.WriteString("query { ...F0 }\n")
	for i := range levels {
		fmt.Fprintf(&b, "fragment F%d on Query { a%d: me { id }", i, i)
		if i+1 < levels {
			fmt.Fprintf(&b, " ...F%d ...F%d", i+1, i+1)
		}
		b.WriteString(" }\n")
	}
	return b.String()
}

// sameAlias is n fields sharing one alias with different arguments (validation compares
// every pair).
func sameAlias(n int) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		fmt.Fprintf(&b, ` a: node(id: "%d") { id }`, i+1)
	}
	return b.String() + " }"
}

// aliases is n aliases of field.
func aliases(n int, field string) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		fmt.Fprintf(&b, " a%d: %s", i, field)
	}
	return b.String() + " }"
}

// deepAnd is a RegionWhereInput nested depth levels deep in `and`.
func deepAnd(depth int) map[string]any {
	w := map[string]any{"name": "x"}
	for range depth {
		w = map[string]any{"and": []any{w}}
	}
	return w
}

// deepAndLiteral is deepAnd written into the query text.
func deepAndLiteral(depth int) string {
	return `{ regions(where: ` + strings.Repeat(`{and: [`, depth) + `{name: "x"}` + strings.Repeat(`]}`, depth) + `) { totalCount } }`
}

const diagramQuery = `networkDiagram(from: "1", depth: 6) { nodes { id } }`

type refusal struct {
	name  string
	token bool
	query string
	vars  map[string]any
	code  string
	limit string // extensions.limit of a QUERY_TOO_LARGE refusal, when one is certain
}

func refusals() []refusal {
	return []refusal{
		{"fragment bomb F0..F23 without a token", false, fragmentBomb(24), nil, "QUERY_TOO_LARGE", "fragmentSpreads"},
		{"fragment bomb F0..F23 with a token", true, fragmentBomb(24), nil, "QUERY_TOO_LARGE", "fragmentSpreads"},
		{"1,500 fields sharing one alias", true, sameAlias(1500), nil, "QUERY_TOO_LARGE", ""},
		{"100 fields sharing one alias", true, sameAlias(100), nil, "QUERY_TOO_LARGE", "repeatedField"},
		{"where 5,000 levels deep in variables", true, `query($w: RegionWhereInput) { regions(where: $w) { totalCount } }`,
			map[string]any{"w": deepAnd(5000)}, "QUERY_TOO_LARGE", "inputDepth"},
		{"where 5,000 levels deep in the text", true, deepAndLiteral(5000), nil, "QUERY_TOO_LARGE", ""},
		{"where 30 levels deep in the text", true, deepAndLiteral(30), nil, "QUERY_TOO_LARGE", "inputDepth"},
		{"1,000 aliases of networkDiagram(depth: 6)", true, aliases(1000, diagramQuery), nil, "QUERY_TOO_LARGE", ""},
		{"100 aliases of networkDiagram(depth: 6)", true, aliases(100, diagramQuery), nil, "COMPLEXITY_LIMIT_EXCEEDED", ""},
		{"a 100 kB query", true, "{ __typename " + strings.Repeat(" ", 100<<10) + "}", nil, "QUERY_TOO_LARGE", "queryBytes"},
		{"50 aliases without a token", false, aliases(50, "__typename"), nil, "QUERY_TOO_LARGE", "aliases"},
	}
}

func TestParseTimeLimits(t *testing.T) {
	t.Parallel()
	env, _ := newEnv(t)
	anon := env.As("")
	for _, tc := range refusals() {
		t.Run(tc.name, func(t *testing.T) {
			e := env
			if !tc.token {
				e = anon
			}
			r := e.Do(t, tc.query, tc.vars)
			got := r.ExpectError(t, tc.code, "")
			if tc.limit != "" && got.Extensions["limit"] != tc.limit {
				t.Errorf("extensions.limit = %v, want %s: %s", got.Extensions["limit"], tc.limit, got.Message)
			}
			if got.Message == "" || strings.Contains(got.Message, "internal") {
				t.Errorf("message %q does not say what is too large", got.Message)
			}
		})
	}

	t.Run("the same queries within the limits run", func(t *testing.T) {
		for _, q := range []string{fragmentBomb(4), sameAlias(5), aliases(10, `networkDiagram(from: "1", depth: 1) { nodes { id } }`)} {
			if r := env.Do(t, q, nil); len(r.Errors) > 0 && r.Errors[0].Code() == "QUERY_TOO_LARGE" || len(r.Errors) > 0 && r.Errors[0].Code() == "COMPLEXITY_LIMIT_EXCEEDED" {
				t.Errorf("refused %.80s…: %s", q, r.ErrorsString())
			}
		}
		r := env.Do(t, `query($w: RegionWhereInput) { regions(where: $w) { totalCount } }`, map[string]any{"w": deepAnd(5)})
		if len(r.Errors) > 0 {
			t.Errorf("a where five `and`s deep: %s", r.ErrorsString())
		}
		if r := env.Do(t, aliases(50, "__typename"), nil); len(r.Errors) > 0 {
			t.Errorf("50 aliases with a token: %s", r.ErrorsString())
		}
	})

	t.Run("GraphiQL's introspection query fits the anonymous limits", func(t *testing.T) {
		r := anon.Do(t, introspectionQuery, nil)
		for _, e := range r.Errors {
			if e.Code() == "QUERY_TOO_LARGE" || e.Code() == "COMPLEXITY_LIMIT_EXCEEDED" {
				t.Errorf("introspection refused without a token: %s", r.ErrorsString())
			}
		}
	})

	t.Run("defaults are tighter without a token", func(t *testing.T) {
		auth, anon := graph.DefaultLimits(), graph.DefaultAnonymousLimits()
		if anon.MaxQueryBytes >= auth.MaxQueryBytes || anon.MaxTokens >= auth.MaxTokens || anon.MaxAliases >= auth.MaxAliases ||
			anon.MaxFragmentSpreads >= auth.MaxFragmentSpreads || anon.MaxFields >= auth.MaxFields || anon.MaxInputDepth >= auth.MaxInputDepth {
			t.Errorf("anonymous limits %+v are not all tighter than %+v", anon, auth)
		}
	})
}

// TestInvalidTextRefused: NUL bytes and invalid UTF-8 never reach PostgreSQL; they are
// VALIDATION errors naming the argument or input field, in variables and in the query text.
func TestInvalidTextRefused(t *testing.T) {
	t.Parallel()
	env, f := newEnv(t)
	anon := env.As("")
	for _, tc := range []struct {
		name  string
		env   *gqltest.Env
		query string
		vars  map[string]any
		field string
	}{
		{"where nameContains in a variable", env, `query($s: String) { regions(where: {nameContains: $s}) { totalCount } }`,
			map[string]any{"s": "a\u0000b"}, "nameContains"},
		{"where nameContains inline", env, `{ regions(where: {nameContains: "a\u0000b"}) { totalCount } }`, nil, "nameContains"},
		{"where object in a variable", env, `query($w: RegionWhereInput) { regions(where: $w) { totalCount } }`,
			map[string]any{"w": map[string]any{"or": []any{map[string]any{"name": "ok"}, map[string]any{"nameHasPrefix": "\x00"}}}}, "nameHasPrefix"},
		{"label value", env, `mutation($in: CreateClusterInput!) { createCluster(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"name": uniq("cl"), "regionID": f.Region(), "labels": map[string]any{"env": "pr\u0000od"}}}, "labels"},
		{"label key", env, `mutation($in: CreateClusterInput!) { createCluster(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"name": uniq("cl"), "regionID": f.Region(), "labels": map[string]any{"e\u0000nv": "prod"}}}, "labels"},
		{"login without a token", anon, `mutation { login(username: "ad\u0000min", password: "x") { token } }`, nil, "username"},
		{"login without a token, variables", anon, `mutation($u: String!) { login(username: $u, password: "x") { token } }`,
			map[string]any{"u": "ad\u0000min"}, "username"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.env.Do(t, tc.query, tc.vars)
			e := r.ExpectError(t, "VALIDATION", tc.field)
			if !strings.Contains(e.Message, tc.field) {
				t.Errorf("message %q does not name %s", e.Message, tc.field)
			}
		})
	}
	// JSON cannot carry invalid UTF-8 (encoders replace it), a URL can.
	t.Run("invalid UTF-8 in a GET query", func(t *testing.T) {
		q := "{ regions(where: {nameContains: \"a\xffb\"}) { totalCount } }"
		_, r, _ := rawRequest(t, env, http.MethodGet, "/query?query="+url.QueryEscape(q), "", "")
		r.ExpectError(t, "VALIDATION", "nameContains")
	})
}

// rawRequest sends a request to /query as it is and decodes the GraphQL error answer.
func rawRequest(t *testing.T, env *gqltest.Env, method, target, contentType, body string) (int, gqltest.Response, string) {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Authorization", "Bearer "+gqltest.AdminToken)
	rec := httptest.NewRecorder()
	env.Handler.ServeHTTP(rec, req)
	var r gqltest.Response
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		t.Fatalf("%s %s (%s): answer is not JSON (HTTP %d): %v: %s", method, target, contentType, rec.Code, err, rec.Body.String())
	}
	return rec.Code, r, rec.Body.String()
}

// TestEveryRefusalHasACode: transport refusals carry extensions.code and a fitting HTTP
// status; malformed ids and contradictory paging are VALIDATION without library text.
func TestEveryRefusalHasACode(t *testing.T) {
	t.Parallel()
	env, _ := newEnv(t)
	query := `{ regions { totalCount } }`
	getMutation := "/query?query=" + url.QueryEscape(`mutation { createRegion(input: {name: "viaget"}) { id } }`)
	for _, tc := range []struct {
		name, method, target, contentType, body string
		status                                  int
		code                                    string
	}{
		{"text/plain", http.MethodPost, "/query", "text/plain", query, http.StatusUnsupportedMediaType, "BAD_REQUEST"},
		{"form", http.MethodPost, "/query", "application/x-www-form-urlencoded", "query=" + url.QueryEscape(query), http.StatusUnsupportedMediaType, "BAD_REQUEST"},
		{"multipart", http.MethodPost, "/query", "multipart/form-data; boundary=x", "--x\r\nContent-Disposition: form-data; name=\"operations\"\r\n\r\n{}\r\n--x--\r\n", http.StatusUnsupportedMediaType, "BAD_REQUEST"},
		{"application/graphql", http.MethodPost, "/query", "application/graphql", query, http.StatusUnsupportedMediaType, "BAD_REQUEST"},
		{"no content type", http.MethodPost, "/query", "", query, http.StatusUnsupportedMediaType, "BAD_REQUEST"},
		{"PUT", http.MethodPut, "/query", "application/json", `{"query":"` + query + `"}`, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED"},
		{"DELETE", http.MethodDelete, "/query", "", "", http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED"},
		{"broken JSON", http.MethodPost, "/query", "application/json", `{not json`, http.StatusBadRequest, "BAD_REQUEST"},
		{"query not a string", http.MethodPost, "/query", "application/json", `{"query": 5}`, http.StatusBadRequest, "BAD_REQUEST"},
		{"GET with broken variables", http.MethodGet, "/query?query=" + url.QueryEscape(query) + "&variables=%7Bx", "", "", http.StatusBadRequest, "BAD_REQUEST"},
		{"GET mutation", http.MethodGet, getMutation, "", "", http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, r, raw := rawRequest(t, env, tc.method, tc.target, tc.contentType, tc.body)
			if status != tc.status {
				t.Errorf("HTTP %d, want %d: %s", status, tc.status, raw)
			}
			r.ExpectError(t, tc.code, "")
			assertNoLibraryText(t, raw)
		})
	}

	for _, tc := range []struct {
		name, query string
		vars        map[string]any
		field       string
	}{
		{"node id not a number", `{ node(id: "abc") { id } }`, nil, "id"},
		{"id in a variable", `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": "abc"}, "id"},
		{"id in an input", `mutation($in: CreateDatacenterInput!) { createDatacenter(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"name": "x", "regionID": "abc"}}, "regionID"},
		{"time not a time", `{ regions(where: {createdAtGT: "yesterday"}) { totalCount } }`, nil, ""},
		{"first and last together", `{ regions(first: 1, last: 1) { totalCount } }`, nil, "first"},
		{"first and last together in variables", `query($f: Int, $l: Int) { regions(first: $f, last: $l) { totalCount } }`, map[string]any{"f": 2, "l": 3}, "first"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := env.Do(t, tc.query, tc.vars)
			e := r.ExpectError(t, "VALIDATION", tc.field)
			assertNoLibraryText(t, e.Message)
			if tc.field == "first" && !strings.Contains(e.Message, "last") {
				t.Errorf("message %q does not name last", e.Message)
			}
		})
	}
}

// assertNoLibraryText fails when s quotes Go library or driver errors.
func assertNoLibraryText(t *testing.T, s string) {
	t.Helper()
	for _, leak := range []string{"strconv.", "json:", "pq:", "sql:", "invalid character", "Go struct", "transport not supported"} {
		if strings.Contains(s, leak) {
			t.Errorf("%q quotes library text %q", s, leak)
		}
	}
}

// BenchmarkRefusals measures each refused query through the real handler: ms per refusal.
func BenchmarkRefusals(b *testing.B) {
	env, _ := newEnv(b)
	anon := env.As("")
	for _, tc := range refusals() {
		b.Run(tc.name, func(b *testing.B) {
			e := env
			if !tc.token {
				e = anon
			}
			body, _ := json.Marshal(map[string]any{"query": tc.query, "variables": tc.vars})
			b.ResetTimer()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				if e.Token != "" {
					req.Header.Set("Authorization", "Bearer "+e.Token)
				}
				rec := httptest.NewRecorder()
				e.Handler.ServeHTTP(rec, req)
				if !strings.Contains(rec.Body.String(), tc.code) {
					b.Fatalf("not refused with %s: %.300s", tc.code, rec.Body.String())
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/refusal")
		})
	}
}

// introspectionQuery is GraphiQL's introspection query.
const introspectionQuery = `query IntrospectionQuery {
  __schema {
    queryType { name }
    mutationType { name }
    subscriptionType { name }
    types { ...FullType }
    directives { name description locations args { ...InputValue } }
  }
}
fragment FullType on __Type {
  kind name description
  fields(includeDeprecated: true) { name description args { ...InputValue } type { ...TypeRef } isDeprecated deprecationReason }
  inputFields { ...InputValue }
  interfaces { ...TypeRef }
  enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason }
  possibleTypes { ...TypeRef }
}
fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue }
fragment TypeRef on __Type {
  kind name
  ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } }
}`
