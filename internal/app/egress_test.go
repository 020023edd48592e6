package app_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/lib/pq"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/internal/app"
	"github.com/virtflow/virtflow/internal/platform/config"
	"github.com/virtflow/virtflow/internal/platform/secrets"
	"github.com/virtflow/virtflow/internal/testkit/poll"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// pgStack runs a server and a standalone worker on a fresh PostgreSQL database and a
// private Redis, with the extra environment vars; it returns the server and the DSN.
func pgStack(t *testing.T, vars map[string]string) (*running, string) {
	t.Helper()
	dsn := testdb.New(t)
	env := map[string]string{"DATABASE_URL": dsn, "REDIS_URL": testdb.PrivateRedis(t)}
	for k, v := range vars {
		env[k] = v
	}
	dir := t.TempDir()
	srv := start(t, loadConfig(t, []string{"--addr", "127.0.0.1:0", "--data-dir", dir, "--image-dir", filepath.Join(dir, "images")}, env))
	wcfg, err := config.Load("worker", []string{"--addr", "127.0.0.1:0", "--image-dir", filepath.Join(dir, "images")},
		func(k string) string {
			if k == "VIRTFLOW_DATA_DIR" {
				return dir
			}
			return env[k]
		}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(authz.SystemContext(context.Background(), "test"))
	done := make(chan error, 1)
	go func() { done <- app.RunWorker(ctx, wcfg, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	t.Cleanup(func() { cancel(); <-done })
	return srv, dsn
}

const createImage = `mutation($in: CreateImageInput!) { createImage(input: $in) { id status } }`

// imageStatus reads an image's status and reason over GraphQL.
func imageStatus(t *testing.T, srv *running, id string) (status, reason string) {
	var out struct {
		Node struct{ Status, StatusReason string }
	}
	srv.mustQuery(t, `query($id: ID!) { node(id: $id) { ... on Image { status statusReason } } }`, map[string]any{"id": id}, &out)
	return out.Node.Status, out.Node.StatusReason
}

// TestImageSourceEgress: through the real server and worker on PostgreSQL and Redis, with
// the default egress policy, an image whose source is a local HTTP server (127.0.0.1, in
// any spelling) is refused at createImage with VALIDATION on source; one whose host name
// resolves to loopback (localhost) is accepted, refused when the worker dials it, and ends
// ERROR with the reason, never ACTIVE, and the local server sees nothing. With
// VIRTFLOW_EGRESS_ALLOW=127.0.0.1/32 the same server's bytes arrive (ACTIVE).
func TestImageSourceEgress(t *testing.T) {
	data := bytes.Repeat([]byte("raw disk "), 1000)
	var hits atomic.Int32
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.ServeContent(w, r, "", time.Unix(0, 0), bytes.NewReader(data))
	}))
	t.Cleanup(src.Close)
	port := src.URL[strings.LastIndex(src.URL, ":")+1:]

	t.Run("default policy", func(t *testing.T) {
		srv, _ := pgStack(t, nil)
		for _, source := range []string{src.URL + "/disk.raw", "http://2130706433:" + port + "/disk.raw", "http://0x7f.1:" + port + "/",
			"http://[::ffff:127.0.0.1]:" + port + "/", "http://169.254.169.254/latest/meta-data/"} {
			began := time.Now()
			g := srv.query(t, createImage, map[string]any{"in": map[string]any{"name": "x", "source": source, "format": "RAW"}})
			took := time.Since(began)
			if len(g.Errors) != 1 || g.Errors[0].Extensions["code"] != "VALIDATION" || g.Errors[0].Extensions["field"] != "source" {
				t.Fatalf("createImage(%s): %+v, want VALIDATION on source", source, g.Errors)
			}
			t.Logf("createImage(%s) refused in %v: %s", source, took, g.Errors[0].Message)
		}
		var created struct{ CreateImage struct{ ID, Status string } }
		srv.mustQuery(t, createImage, map[string]any{"in": map[string]any{"name": "rebound", "source": "http://localhost:" + port + "/disk.raw",
			"format": "RAW"}}, &created)
		id := created.CreateImage.ID
		var reason string
		poll.Until(t, time.Minute, func() error {
			st, r := imageStatus(t, srv, id)
			if st == "ACTIVE" {
				t.Fatalf("the image of a loopback server went ACTIVE")
			}
			if st != "ERROR" {
				return fmt.Errorf("image %s", st)
			}
			reason = r
			return nil
		})
		if !strings.Contains(reason, "denied by the egress policy") || hits.Load() != 0 {
			t.Fatalf("ERROR reason %q, %d requests reached the server: want the policy's refusal and none", reason, hits.Load())
		}
	})

	t.Run("allow list", func(t *testing.T) {
		srv, _ := pgStack(t, map[string]string{"VIRTFLOW_EGRESS_ALLOW": "127.0.0.1/32"})
		var created struct{ CreateImage struct{ ID, Status string } }
		srv.mustQuery(t, createImage, map[string]any{"in": map[string]any{"name": "allowed", "source": src.URL + "/disk.raw", "format": "RAW"}}, &created)
		poll.Until(t, time.Minute, func() error {
			if st, r := imageStatus(t, srv, created.CreateImage.ID); st != "ACTIVE" {
				return fmt.Errorf("image %s %s", st, r)
			}
			return nil
		})
	})
}

// TestHookFieldsThroughAPI: through the real server on PostgreSQL, a maintainer group's
// webhookURL and an event rule's hookURL naming a loopback address are refused with
// VALIDATION naming the field; a hookSecret is stored sealed (the raw column does not hold
// it) and the API does not return it.
func TestHookFieldsThroughAPI(t *testing.T) {
	srv, dsn := pgStack(t, nil)
	g := srv.query(t, `mutation { createMaintainerGroup(input: {name: "team", webhookURL: "http://[::ffff:127.0.0.1]:9/"}) { id } }`, nil)
	if len(g.Errors) != 1 || g.Errors[0].Extensions["code"] != "VALIDATION" || g.Errors[0].Extensions["field"] != "webhookURL" {
		t.Fatalf("createMaintainerGroup: %+v, want VALIDATION on webhookURL", g.Errors)
	}
	g = srv.query(t, `mutation { createEventRule(input: {name: "r", kind: ACTION, action: CALL_HOOK, hookURL: "http://0x7f.1/"}) { id } }`, nil)
	if len(g.Errors) != 1 || g.Errors[0].Extensions["code"] != "VALIDATION" || g.Errors[0].Extensions["field"] != "hookURL" {
		t.Fatalf("createEventRule: %+v, want VALIDATION on hookURL", g.Errors)
	}
	var out struct{ CreateEventRule struct{ ID string } }
	srv.mustQuery(t, `mutation { createEventRule(input: {name: "r", kind: ACTION, action: CALL_HOOK,
		hookURL: "https://hooks.example.com/x", hookSecret: "tr0ub4dor-and-3"}) { id } }`, nil, &out)
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var stored string
	if err := db.QueryRow(`SELECT hook_secret FROM event_rules WHERE id = $1`, out.CreateEventRule.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stored, "tr0ub4dor") || !secrets.IsSealed(stored) {
		t.Fatalf("hook_secret column holds %q", stored)
	}
}

// TestSecretKeyFileEmbedded: in embedded mode without VIRTFLOW_SECRET_KEY the server makes
// a key under its data directory, readable by its owner only, and keeps it across starts.
func TestSecretKeyFileEmbedded(t *testing.T) {
	dir := t.TempDir()
	cfg := loadConfig(t, []string{"--addr", "127.0.0.1:0", "--data-dir", dir}, nil)
	start(t, cfg).stop(t)
	path := filepath.Join(dir, "secret.key")
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, mode %v; want 0600", err, st.Mode().Perm())
	}
	first, _ := os.ReadFile(path)
	start(t, cfg).stop(t)
	if again, _ := os.ReadFile(path); !bytes.Equal(first, again) {
		t.Fatal("the key changed across starts")
	}
}
