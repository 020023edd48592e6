package httpapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/virtflow/virtflow/ent/alert"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// The elevation endpoint on the embedded SQLite database (package diagram tests it, and the
// views, on PostgreSQL): a drawing for the admin, the error answers otherwise.
func TestElevationSVGOnSQLite(t *testing.T) {
	env := gqltest.SQLite(t)
	c, ctx := env.Client, gqltest.System()
	reg := c.Region.Create().SetName("svg-region").SaveX(ctx)
	dc := c.Datacenter.Create().SetName("svg-dc").SetRegion(reg).SaveX(ctx)
	fl := c.Floor.Create().SetName("floor-1-1-1").SetDatacenter(dc).SaveX(ctx)
	rk := c.Rack.Create().SetName("rack-1-1").SetFloor(fl).SetHeight(10).SaveX(ctx)
	h := c.Host.Create().SetName("svg-server01").SetKind(host.KindServer).SetRack(rk).SetPosition(3).SetHeight(2).SaveX(ctx)
	c.Alert.Create().SetName("psu").SetSeverity(alert.SeverityWarning).SetHost(h).ExecX(ctx)

	get := func(path, token string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		env.Handler.ServeHTTP(rec, req)
		return rec
	}
	rec := get(fmt.Sprintf("/api/racks/%d/elevation.svg", rk.ID), gqltest.AdminToken)
	body := rec.Body.String()
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "image/svg+xml" ||
		!strings.HasPrefix(body, "<svg") || !strings.Contains(body, ">svg-server01<") {
		t.Fatalf("HTTP %d %s: %.300s", rec.Code, rec.Header().Get("Content-Type"), body)
	}
	for _, tt := range []struct {
		path, token string
		status      int
	}{
		{fmt.Sprintf("/api/racks/%d/elevation.svg", rk.ID), "", http.StatusUnauthorized},
		{fmt.Sprintf("/api/racks/%d/elevation.svg", h.ID), gqltest.AdminToken, http.StatusNotFound},
		{"/api/racks/abc/elevation.svg", gqltest.AdminToken, http.StatusBadRequest},
	} {
		if rec := get(tt.path, tt.token); rec.Code != tt.status {
			t.Errorf("GET %s: HTTP %d %s, want %d", tt.path, rec.Code, rec.Body.String(), tt.status)
		}
	}
}
