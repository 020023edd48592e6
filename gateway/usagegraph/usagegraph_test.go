package usagegraph

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/virtflow/virtflow/authz"
)

// TestSDHandlerAuthorization: service discovery answers a platform role that reads nodes
// and refuses a tenant member and an anonymous caller.
func TestSDHandlerAuthorization(t *testing.T) {
	h := SDHandler(func() []Target { return []Target{{Node: 7, Addr: "10.0.0.5:9101"}} })
	for _, tc := range []struct {
		name   string
		viewer *authz.Viewer
		status int
	}{
		{"anonymous", nil, http.StatusUnauthorized},
		{"tenant member", &authz.Viewer{Name: "m", Bindings: []authz.Binding{{Role: authz.RoleTenantMember, Domain: authz.TenantDomain(3)}}}, http.StatusForbidden},
		{"operator", &authz.Viewer{Name: "op", Bindings: []authz.Binding{{Role: authz.RoleOperator, Domain: authz.Platform}}}, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.viewer != nil {
				ctx = authz.NewContext(ctx, tc.viewer)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/prometheus/targets", nil).WithContext(ctx))
			if rec.Code != tc.status {
				t.Fatalf("status %d (%s), want %d", rec.Code, rec.Body, tc.status)
			}
			if tc.status == http.StatusOK && !strings.Contains(rec.Body.String(), `"targets":["10.0.0.5:9101"]`) {
				t.Fatalf("body %s: want the agent's target", rec.Body)
			}
		})
	}
}

// TestGraphRefusesBadRange: an unknown range is a VALIDATION error on range, before any
// database or Prometheus call.
func TestGraphRefusesBadRange(t *testing.T) {
	_, err := (&Service{}).Graph(context.Background(), 1, 0, "year")
	e, ok := err.(*Error)
	if !ok || e.Code != "VALIDATION" || e.Field != "range" {
		t.Fatalf("Graph(range=year) = %v, want VALIDATION on range", err)
	}
}
