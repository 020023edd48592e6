package graph_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// TestPostAnswers: a POST is answered as gqlgen's transport answers it — status, content
// type and body — now that /query writes the response itself for application/json: a
// result, a query that does not parse or validate (422 with the error), a persisted query
// the server does not know (200 with the error), and the graphql-response media type, which
// keeps gqlgen's transport.
func TestPostAnswers(t *testing.T) {
	t.Parallel()
	env, _ := newEnv(t)
	for _, tc := range []struct {
		name, accept, body string
		status             int
		contentType        string
		data               bool
		errorCode          string
	}{
		{"result", "", `{"query":"{ regions(first: 1) { totalCount } }"}`, http.StatusOK, "application/json", true, ""},
		{"result, accept JSON", "application/json", `{"query":"{ regions(first: 1) { totalCount } }"}`, http.StatusOK, "application/json", true, ""},
		{"does not parse", "", `{"query":"{ regions("}`, http.StatusUnprocessableEntity, "application/json", false, "GRAPHQL_PARSE_FAILED"},
		{"does not validate", "", `{"query":"{ regions { noSuchField } }"}`, http.StatusUnprocessableEntity, "application/json", false, "GRAPHQL_VALIDATION_FAILED"},
		{"unknown persisted query", "", `{"extensions":{"persistedQuery":{"version":1,"sha256Hash":"` + strings.Repeat("ab", 32) + `"}}}`,
			http.StatusOK, "application/json", false, "PERSISTED_QUERY_NOT_FOUND"},
		{"graphql-response media type", "application/graphql-response+json", `{"query":"{ regions(first: 1) { totalCount } }"}`,
			http.StatusOK, "application/graphql-response+json", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/query", strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+gqltest.AdminToken)
			if tc.accept != "" {
				req.Header.Set("Accept", tc.accept)
			}
			rec := httptest.NewRecorder()
			env.Handler.ServeHTTP(rec, req)
			if rec.Code != tc.status {
				t.Errorf("HTTP %d, want %d: %s", rec.Code, tc.status, rec.Body.String())
			}
			if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, tc.contentType) {
				t.Errorf("Content-Type %q, want %s", ct, tc.contentType)
			}
			var r gqltest.Response
			if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
				t.Fatalf("answer is not JSON: %v: %s", err, rec.Body.String())
			}
			if got := len(r.Data) > 0 && string(r.Data) != "null"; got != tc.data {
				t.Errorf("data %s, want data: %v", r.Data, tc.data)
			}
			switch {
			case tc.errorCode == "" && len(r.Errors) > 0:
				t.Errorf("errors %+v", r.Errors)
			case tc.errorCode != "" && (len(r.Errors) == 0 || r.Errors[0].Code() != tc.errorCode):
				t.Errorf("errors %+v, want %s", r.Errors, tc.errorCode)
			}
		})
	}
}
