package authztest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/identity"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/graph"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// The same page of racks, each with the count of its hosts, is read through the whole HTTP
// handler (request id, identity middleware, GraphQL, ent privacy) by:
//
//   - BenchmarkListRacksAuthorized: the admin's bearer token — the token is looked up with
//     its owner, bindings and maintainer (identity.Authenticate), and every ent query is
//     checked against the Casbin policy;
//   - BenchmarkListRacksViewerRole: a viewer-role token — the same, through role inheritance;
//   - BenchmarkListRacksPolicyOnly: no Authorization header, on a request whose context already
//     carries an admin viewer (not the system) — no token lookup, but every ent query goes
//     through the Casbin policy as for the admin's token;
//   - BenchmarkListRacksSystem: no Authorization header, on a request whose context already
//     carries the system viewer — identity.Middleware passes a request without Authorization
//     on with its context, so no token is looked up and the policy allows at once.
//
// The difference between Authorized and System is what authentication and authorization add
// to a request; PolicyOnly splits it into the token lookup (Authorized - PolicyOnly) and the
// policy checks (PolicyOnly - System).
const benchRacks = `{ racks(first: 50) { edges { node { name hosts { totalCount } } } } }`

// benchEnv opens the package's database with 50 more racks of 4 hosts each, and returns a
// handler over a client that counts the SQL statements it sends, the counter, and a
// viewer-role token.
func benchEnv(b *testing.B) (http.Handler, *atomic.Int64, string) {
	b.Helper()
	w := newWorld(b)
	for range 50 {
		rack := w.c.Rack.Create().SetName(uniq("bench-rack")).SetFloorID(w.floor).SaveX(w.ctx).ID
		for u := range 4 {
			w.c.Host.Create().SetName(uniq("bench-host")).SetRackID(rack).SetPosition(1 + 2*u).SaveX(w.ctx)
		}
	}
	var n atomic.Int64
	drv := dialect.DebugWithContext(entsql.OpenDB(dialect.Postgres, w.env.DB.DB), func(context.Context, ...any) { n.Add(1) })
	db := &infra.Database{Client: ent.NewClient(ent.Driver(drv)), DB: w.env.DB.DB, Dialect: dialect.Postgres}
	ids := &identity.Service{Client: db.Client, Redis: w.env.Identity.Redis, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	return gqltest.NewHandler(db, ids, graph.DefaultOptions()), &n, w.viewer("viewer").token
}

func benchRequest(ctx context.Context, token string) *http.Request {
	body, _ := json.Marshal(map[string]any{"query": benchRacks})
	req := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body)).WithContext(ctx)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req
}

func runBench(b *testing.B, h http.Handler, statements *atomic.Int64, ctx context.Context, token string) {
	b.Helper()
	// One checked request first: the benchmark must measure a successful, full page.
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, benchRequest(ctx, token))
	var out struct {
		Data struct {
			Racks struct{ Edges []json.RawMessage }
		}
		Errors []json.RawMessage
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || len(out.Errors) > 0 || len(out.Data.Racks.Edges) != 50 {
		b.Fatalf("HTTP %d: %s", rec.Code, rec.Body.String())
	}
	b.ReportAllocs()
	b.ResetTimer()
	statements.Store(0)
	n := 0
	for b.Loop() {
		n++
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, benchRequest(ctx, token))
		if rec.Code != http.StatusOK {
			b.Fatalf("HTTP %d: %s", rec.Code, rec.Body.String())
		}
	}
	b.ReportMetric(float64(statements.Load())/float64(n), "sql/op")
}

func BenchmarkListRacksAuthorized(b *testing.B) {
	h, n, _ := benchEnv(b)
	runBench(b, h, n, context.Background(), gqltest.AdminToken)
}

func BenchmarkListRacksViewerRole(b *testing.B) {
	h, n, token := benchEnv(b)
	runBench(b, h, n, context.Background(), token)
}

func BenchmarkListRacksPolicyOnly(b *testing.B) {
	h, n, _ := benchEnv(b)
	admin := &authz.Viewer{Name: "bench-admin", Bindings: []authz.Binding{{Role: authz.RoleAdmin, Domain: authz.Platform}}}
	runBench(b, h, n, authz.NewContext(context.Background(), admin), "")
}

func BenchmarkListRacksSystem(b *testing.B) {
	h, n, _ := benchEnv(b)
	runBench(b, h, n, authz.SystemContext(context.Background(), "bench"), "")
}
