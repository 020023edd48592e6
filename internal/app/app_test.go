package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/virtflow/virtflow/authz"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/virtflow/virtflow/internal/app"
	"github.com/virtflow/virtflow/internal/platform/config"
	"github.com/virtflow/virtflow/internal/testkit/poll"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// syncBuffer is a log sink safe to read while the server writes to it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// loadConfig builds a configuration the way the server binary does, from flags and an
// environment given as a map.
func loadConfig(t *testing.T, args []string, vars map[string]string) config.Config {
	t.Helper()
	cfg, err := config.Load("server", args, func(k string) string { return vars[k] }, io.Discard)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	cfg.ShutdownGrace = 5 * time.Second
	if cfg.AdminToken == "" {
		cfg.AdminToken = testAdminToken
	}
	return cfg
}

// testAdminToken is the VIRTFLOW_ADMIN_TOKEN of the servers these tests start.
const testAdminToken = "vf_app-test-admin-token-0123456789"

// running is a RunServer started by a test.
type running struct {
	addr   string
	cancel context.CancelFunc
	done   chan error
	log    *syncBuffer
}

// start runs RunServer in the background and waits until it serves.
func start(t *testing.T, cfg config.Config) *running {
	t.Helper()
	return startWith(t, cfg, app.Options{})
}

// startWith is start through RunServerWith with o (its Ready is set here).
func startWith(t *testing.T, cfg config.Config, o app.Options) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(authz.SystemContext(context.Background(), "test"))
	r := &running{cancel: cancel, done: make(chan error, 1), log: &syncBuffer{}}
	log := slog.New(slog.NewTextHandler(r.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ready := make(chan string, 1)
	o.Ready = func(addr string) { ready <- addr }
	go func() { r.done <- app.RunServerWith(ctx, cfg, log, o) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(30 * time.Second):
			t.Errorf("RunServer did not return after the test")
		}
	})
	select {
	case r.addr = <-ready:
	case err := <-r.done:
		t.Fatalf("RunServer returned before it was ready: %v\nlog:\n%s", err, r.log.String())
	case <-time.After(2 * time.Minute):
		t.Fatalf("RunServer not ready after 2 minutes\nlog:\n%s", r.log.String())
	}
	return r
}

// stop cancels the server's context and asserts RunServer returns nil promptly.
func (r *running) stop(t *testing.T) {
	t.Helper()
	began := time.Now()
	r.cancel()
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("RunServer returned %v after cancel, want nil\nlog:\n%s", err, r.log.String())
		}
		r.done <- err // for the cleanup
	case <-time.After(10 * time.Second):
		t.Fatalf("RunServer still running 10s after cancel\nlog:\n%s", r.log.String())
	}
	if d := time.Since(began); d > 6*time.Second {
		t.Errorf("shutdown took %v", d)
	}
	if c, err := net.DialTimeout("tcp", r.addr, time.Second); err == nil {
		c.Close()
		t.Errorf("%s still accepts connections after shutdown", r.addr)
	}
}

func (r *running) url(path string) string { return "http://" + r.addr + path }

type gqlResponse struct {
	Data   json.RawMessage `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
}

func (r *running) query(t *testing.T, q string, vars map[string]any) gqlResponse {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": q, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, r.url("/query"), bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /query: %v", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var g gqlResponse
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatalf("decode (HTTP %d): %v: %s", resp.StatusCode, err, raw)
	}
	return g
}

func (r *running) mustQuery(t *testing.T, q string, vars map[string]any, out any) {
	t.Helper()
	g := r.query(t, q, vars)
	if len(g.Errors) > 0 {
		t.Fatalf("query %s: errors %+v", q, g.Errors)
	}
	if err := json.Unmarshal(g.Data, out); err != nil {
		t.Fatalf("decode data %s: %v", g.Data, err)
	}
}

// regionNames lists the regions over GraphQL, sorted.
func (r *running) regionNames(t *testing.T) []string {
	t.Helper()
	var data struct {
		Regions struct {
			TotalCount int
			Edges      []struct{ Node struct{ Name string } }
		}
	}
	r.mustQuery(t, `{ regions { totalCount edges { node { name } } } }`, nil, &data)
	names := make([]string, 0, len(data.Regions.Edges))
	for _, e := range data.Regions.Edges {
		names = append(names, e.Node.Name)
	}
	if data.Regions.TotalCount != len(names) {
		t.Errorf("totalCount %d but %d edges", data.Regions.TotalCount, len(names))
	}
	sort.Strings(names)
	return names
}

func (r *running) expectReady(t *testing.T, checks ...string) {
	t.Helper()
	resp, err := http.Get(r.url("/readyz"))
	if err != nil {
		t.Fatalf("GET /readyz: %v", err)
	}
	defer resp.Body.Close()
	var body struct {
		Ready  bool
		Checks map[string]string
	}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != http.StatusOK || !body.Ready {
		t.Errorf("/readyz = %d %+v, want 200 ready", resp.StatusCode, body)
	}
	for _, c := range checks {
		if body.Checks[c] != "ok" {
			t.Errorf("/readyz check %s = %q, want ok (all: %v)", c, body.Checks[c], body.Checks)
		}
	}
}

const createRegion = `mutation($name: String!) { createRegion(input: {name: $name, description: "made by app_test"}) { id name status } }`

func TestRunServerEmbedded(t *testing.T) {
	dir := t.TempDir()
	cfg := loadConfig(t, []string{"--addr", "127.0.0.1:0", "--data-dir", dir}, nil)
	if !cfg.Embedded() || cfg.Demo || cfg.RedisURL != "" {
		t.Fatalf("config is not embedded without demo: %+v", cfg)
	}

	began := time.Now()
	srv := start(t, cfg)
	t.Logf("embedded server ready in %v at %s", time.Since(began), srv.addr)
	srv.expectReady(t, "database", "redis")
	if _, err := os.Stat(filepath.Join(dir, "virtflow.db")); err != nil {
		t.Errorf("no SQLite database in the data dir: %v", err)
	}

	var created struct {
		CreateRegion struct{ ID, Name, Status string }
	}
	srv.mustQuery(t, createRegion, map[string]any{"name": "kyoto1"}, &created)
	if created.CreateRegion.Name != "kyoto1" || created.CreateRegion.Status != "OPEN" || created.CreateRegion.ID == "" {
		t.Errorf("createRegion = %+v", created.CreateRegion)
	}
	if got := srv.regionNames(t); strings.Join(got, ",") != "kyoto1" {
		t.Errorf("regions = %v, want [kyoto1]", got)
	}
	// The playground and metrics are served by the same process (metrics to a token).
	for _, p := range []string{"/playground", "/healthz", "/"} {
		resp, err := http.Get(srv.url(p))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s = %d", p, resp.StatusCode)
		}
	}
	if log := srv.log.String(); !strings.Contains(log, "worker started") {
		t.Errorf("embedded mode did not start the worker in-process; log:\n%s", log)
	}

	srv.stop(t)
	if log := srv.log.String(); !strings.Contains(log, "worker stopped") {
		t.Errorf("the embedded worker was not stopped on shutdown; log:\n%s", log)
	}

	// Restart on the same data dir: the region is still there.
	again := start(t, cfg)
	if got := again.regionNames(t); strings.Join(got, ",") != "kyoto1" {
		t.Errorf("regions after restart = %v, want [kyoto1]", got)
	}
	again.expectReady(t, "database", "redis")
	again.stop(t)
}

func TestRunServerIntrospectionSwitch(t *testing.T) {
	cfg := loadConfig(t, []string{"--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--introspection=false"}, nil)
	srv := start(t, cfg)
	if g := srv.query(t, `{ __schema { queryType { name } } }`, nil); len(g.Errors) == 0 {
		t.Errorf("introspection answered with --introspection=false: %s", g.Data)
	}
	srv.stop(t)
	cfg.Introspection = true
	srv = start(t, cfg)
	var data struct {
		Schema struct{ QueryType struct{ Name string } } `json:"__schema"`
	}
	srv.mustQuery(t, `{ __schema { queryType { name } } }`, nil, &data)
	if data.Schema.QueryType.Name != "Query" {
		t.Errorf("__schema.queryType = %q", data.Schema.QueryType.Name)
	}
	srv.stop(t)
}

func TestRunServerShutdownWithOpenConnection(t *testing.T) {
	srv := start(t, loadConfig(t, []string{"--addr", "127.0.0.1:0", "--data-dir", t.TempDir()}, nil))
	// An idle keep-alive connection must not hold the shutdown up.
	client := &http.Client{Transport: &http.Transport{}}
	resp, err := client.Get(srv.url("/healthz"))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	srv.stop(t)
}

func TestRunServerPostgresAndRedis(t *testing.T) {
	ctx, cancel := context.WithTimeout(authz.SystemContext(context.Background(), "test"), time.Minute)
	defer cancel()
	dsn, drop, err := testdb.Create(ctx)
	if err != nil {
		testdb.Unavailable(t, err)
	}
	t.Cleanup(drop)
	vars := map[string]string{"DATABASE_URL": dsn, "REDIS_URL": testdb.RedisURL()}
	cfg := loadConfig(t, []string{"--addr", "127.0.0.1:0", "--data-dir", t.TempDir()}, vars)
	if cfg.Embedded() {
		t.Fatalf("config with DATABASE_URL is embedded: %+v", cfg)
	}

	srv := start(t, cfg)
	srv.expectReady(t, "database", "redis")
	var created struct{ CreateRegion struct{ Name string } }
	srv.mustQuery(t, createRegion, map[string]any{"name": "pg1"}, &created)
	if got := srv.regionNames(t); strings.Join(got, ",") != "pg1" {
		t.Errorf("regions = %v, want [pg1]", got)
	}
	log := srv.log.String()
	if !strings.Contains(log, "dialect=postgres") {
		t.Errorf("server did not report the postgres dialect; log:\n%s", log)
	}
	if strings.Contains(log, "worker started") {
		t.Errorf("the worker ran in-process with DATABASE_URL set; log:\n%s", log)
	}
	srv.stop(t)

	again := start(t, cfg)
	if got := again.regionNames(t); strings.Join(got, ",") != "pg1" {
		t.Errorf("regions after restart = %v, want [pg1]", got)
	}
	again.stop(t)
}

func TestRunServerDemo(t *testing.T) {
	dir := t.TempDir()
	cfg := loadConfig(t, []string{"--addr", "127.0.0.1:0", "--data-dir", dir, "--demo"}, nil)
	began := time.Now()
	srv := start(t, cfg)
	t.Logf("demo server ready in %v", time.Since(began))
	srv.expectReady(t, "database", "redis")
	names := srv.regionNames(t)
	if strings.Join(names, ",") != "osaka1,tokyo1" {
		t.Errorf("regions = %v, want [osaka1 tokyo1]", names)
	}
	var counts struct {
		Racks, Hosts struct{ TotalCount int }
	}
	srv.mustQuery(t, `{ racks { totalCount } hosts { totalCount } }`, nil, &counts)
	if counts.Racks.TotalCount == 0 || counts.Hosts.TotalCount == 0 {
		t.Errorf("demo datacenter has %d racks and %d hosts; want some of each", counts.Racks.TotalCount, counts.Hosts.TotalCount)
	}
	// The simulated fleet plays every demo VM's guest: each reaches READY through the
	// readiness endpoint's own function, with the address its config drive gave it.
	poll.Until(t, 2*time.Minute, func() error {
		var vms struct {
			VirtualMachines struct {
				Edges []struct {
					Node struct {
						Name, Status, GuestState string
						GuestAddresses           []string
					}
				}
			}
		}
		srv.mustQuery(t, `{ virtualMachines(first: 200) { edges { node { name status guestState guestAddresses } } } }`, nil, &vms)
		if len(vms.VirtualMachines.Edges) == 0 {
			return errors.New("no demo VMs")
		}
		for _, e := range vms.VirtualMachines.Edges {
			if v := e.Node; v.Status == "ACTIVE" && (v.GuestState != "READY" || len(v.GuestAddresses) == 0) {
				return fmt.Errorf("demo VM %s is ACTIVE with guest %s, addresses %v", v.Name, v.GuestState, v.GuestAddresses)
			}
		}
		return nil
	})
	srv.stop(t)

	// Loading the demo again on the same data changes nothing.
	again := start(t, cfg)
	if got := again.regionNames(t); strings.Join(got, ",") != "osaka1,tokyo1" {
		t.Errorf("regions after a second demo start = %v", got)
	}
	var counts2 struct {
		Racks, Hosts struct{ TotalCount int }
	}
	again.mustQuery(t, `{ racks { totalCount } hosts { totalCount } }`, nil, &counts2)
	if counts2 != counts {
		t.Errorf("second demo load changed counts: %+v → %+v", counts, counts2)
	}
	if log := again.log.String(); !strings.Contains(log, "already_loaded=true") {
		t.Errorf("second start did not report the demo as already loaded; log:\n%s", log)
	}
	again.stop(t)
}

func TestRunServerStartupErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		args    []string
		vars    map[string]string
		wantErr string
	}{
		{"address in use", []string{"--addr", busy.Addr().String(), "--data-dir", t.TempDir()}, nil, "listen"},
		{"data dir is a file", []string{"--addr", "127.0.0.1:0", "--data-dir", file}, nil, "data dir"},
		{"redis unreachable", []string{"--addr", "127.0.0.1:0", "--data-dir", t.TempDir()},
			map[string]string{"REDIS_URL": "redis://127.0.0.1:1/0"}, "redis"},
		{"redis url malformed", []string{"--addr", "127.0.0.1:0", "--data-dir", t.TempDir()},
			map[string]string{"REDIS_URL": "http://nope"}, "REDIS_URL"},
		{"postgres unreachable", []string{"--addr", "127.0.0.1:0", "--data-dir", t.TempDir()},
			map[string]string{"DATABASE_URL": "postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=2"}, "postgres"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := loadConfig(t, tt.args, tt.vars)
			ctx, cancel := context.WithTimeout(authz.SystemContext(context.Background(), "test"), 30*time.Second)
			defer cancel()
			readyCalled := false
			err := app.RunServer(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), func(string) { readyCalled = true })
			if err == nil {
				t.Fatalf("RunServer succeeded; want an error mentioning %q", tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not mention %q", err, tt.wantErr)
			}
			if readyCalled {
				t.Errorf("ready was called although the server failed")
			}
		})
	}
}
