// Package gqltest is the test harness for VirtFlow's GraphQL API: it opens a migrated database
// (PostgreSQL through testdb, or SQLite in a temporary directory), builds the real HTTP
// handler, and sends GraphQL over it, returning data and errors with their extensions.code.
package gqltest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/controllers/alerting"
	"github.com/virtflow/virtflow/controllers/imagestore"
	"github.com/virtflow/virtflow/domain/egress"
	"github.com/virtflow/virtflow/domain/identity"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/gateway/httpapi"
	"github.com/virtflow/virtflow/graph"
	"github.com/virtflow/virtflow/internal/platform/config"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/platform/secrets"
)

// AdminToken is the bearer token of the admin user every Env bootstraps.
const AdminToken = "vf_test-admin-token-for-gqltest"

// Env is a database and the HTTP handler over it. Requests carry Token (the admin's, unless
// a test sets another; empty sends none).
type Env struct {
	Client   *ent.Client
	DB       *infra.Database
	Handler  http.Handler
	Identity *identity.Service
	Token    string
}

// System is a context acting as the system, for tests that write or read through Client.
func System() context.Context { return authz.SystemContext(context.Background(), "test") }

// As returns a copy of the Env whose requests carry token.
func (e *Env) As(token string) *Env {
	c := *e
	c.Token = token
	return &c
}

// Postgres opens the PostgreSQL database dsn (from testdb), migrates it and builds the handler.
func Postgres(tb testing.TB, dsn string) *Env {
	tb.Helper()
	return open(tb, dsn, "")
}

// SQLite opens a fresh embedded SQLite database in a temporary directory.
func SQLite(tb testing.TB) *Env {
	tb.Helper()
	return open(tb, "", tb.TempDir())
}

func open(tb testing.TB, dsn, dir string) *Env {
	ctx := context.Background()
	db, err := infra.OpenDatabase(ctx, dsn, dir)
	if err != nil {
		tb.Fatalf("open database: %v", err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	redis, err := infra.OpenRedis(ctx, "")
	if err != nil {
		tb.Fatalf("start redis: %v", err)
	}
	tb.Cleanup(func() { _ = redis.Close() })
	// The write rules of production (internal/app): the default egress policy, and hook
	// secrets sealed under the key a server of this database would use (config's
	// SecretKeyFile), so that a server and workers started on it open them.
	keyFile := config.Config{DatabaseURL: dsn, DataDir: dir}.SecretKeyFile()
	key, _, err := secrets.LoadKeyFile(keyFile)
	if err != nil {
		tb.Fatalf("secret key: %v", err)
	}
	keys, err := secrets.NewKeyring(key)
	if err != nil {
		tb.Fatal(err)
	}
	imagestore.Install(db.Client, egress.MustParse(""))
	alerting.Install(db.Client, egress.MustParse(""), keys)
	ids := &identity.Service{Client: db.Client, Redis: redis.Client, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if err := ids.EnsureAdminToken(ctx, AdminToken); err != nil {
		tb.Fatalf("bootstrap admin token: %v", err)
	}
	return &Env{Client: db.Client, DB: db, Identity: ids, Token: AdminToken, Handler: NewHandler(db, ids, graph.DefaultOptions())}
}

// NewHandler builds the full HTTP surface with the given GraphQL options, logging to nowhere.
func NewHandler(db *infra.Database, ids *identity.Service, opts graph.Options) http.Handler {
	return httpapi.New(httpapi.Deps{
		Client:   db.Client,
		Logger:   testLogger(),
		GraphQL:  opts,
		Checks:   map[string]httpapi.Checker{"database": db},
		Identity: ids,
	})
}

// Error is a GraphQL error as a client sees it.
type Error struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

// Code is extensions.code.
func (e Error) Code() string { s, _ := e.Extensions["code"].(string); return s }

// Field is extensions.field.
func (e Error) Field() string { s, _ := e.Extensions["field"].(string); return s }

// Response is a decoded GraphQL response.
type Response struct {
	Status int
	Data   json.RawMessage `json:"data"`
	Errors []Error         `json:"errors"`
}

// Do posts query with variables to /query and decodes the answer; it fails the test only when
// the HTTP exchange itself fails.
func (e *Env) Do(tb testing.TB, query string, vars map[string]any) Response {
	tb.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if e.Token != "" {
		req.Header.Set("Authorization", "Bearer "+e.Token)
	}
	rec := httptest.NewRecorder()
	e.Handler.ServeHTTP(rec, req)
	var r Response
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		tb.Fatalf("decode response (HTTP %d): %v: %s", rec.Code, err, rec.Body.String())
	}
	r.Status = rec.Code
	return r
}

// MustDo is Do that fails the test on any GraphQL error and decodes data into out.
func (e *Env) MustDo(tb testing.TB, query string, vars map[string]any, out any) {
	tb.Helper()
	r := e.Do(tb, query, vars)
	if len(r.Errors) > 0 {
		tb.Fatalf("unexpected errors: %s\nquery: %s", r.ErrorsString(), query)
	}
	if out != nil {
		if err := json.Unmarshal(r.Data, out); err != nil {
			tb.Fatalf("decode data: %v: %s", err, r.Data)
		}
	}
}

// ErrorsString renders the errors for a failure message.
func (r Response) ErrorsString() string {
	b, _ := json.Marshal(r.Errors)
	return string(b)
}

// ExpectError asserts the response failed with code (and field, when not empty).
func (r Response) ExpectError(tb testing.TB, code, field string) Error {
	tb.Helper()
	if len(r.Errors) == 0 {
		tb.Fatalf("expected error %s (field %q), got data %s", code, field, r.Data)
	}
	e := r.Errors[0]
	if e.Code() != code || (field != "" && e.Field() != field) {
		tb.Fatalf("expected error %s (field %q), got %s", code, field, r.ErrorsString())
	}
	return e
}

// ID formats an ent id as a GraphQL ID.
func ID(id int) string { return fmt.Sprint(id) }

// testLogger discards logs unless VIRTFLOW_TEST_LOG=1, when it writes them to stderr.
func testLogger() *slog.Logger {
	if os.Getenv("VIRTFLOW_TEST_LOG") == "1" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}
