package metrics_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/goccy/go-yaml"
	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/virtflow/virtflow/controllers/metrics"
	"github.com/virtflow/virtflow/demo"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/gateway/httpapi"
	"github.com/virtflow/virtflow/graph"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

var metricName = regexp.MustCompile(`\bvirtflow_[a-z_]+`)

// exposed returns the names of every virtflow_ series a server exposes on /metrics (domain
// and HTTP metrics), with the _bucket/_sum/_count series of histograms, and the exposition.
func exposed(t *testing.T) (map[string]bool, []byte) {
	t.Helper()
	env := gqltest.SQLite(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if _, err := demo.Load(gqltest.System(), env.Client, log); err != nil {
		t.Fatal(err)
	}
	opt := asynq.RedisClientOpt{Addr: miniredis.RunT(t).Addr()}
	qc := asynq.NewClient(opt)
	defer qc.Close()
	if _, err := qc.Enqueue(asynq.NewTask("vm:create", nil)); err != nil {
		t.Fatal(err)
	}
	env.Client.HookDelivery.Create().SetURL("http://hooks.example/alert").SetIdempotencyKey("exposed-1").
		SetPayload("{}").ExecX(gqltest.System())
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.New(env.Client, opt, log))
	// The process's own counts: one placement of each outcome, two open subscriptions.
	placements := metrics.NewPlacement(reg)
	placements.Observe(12*time.Millisecond, nil)
	placements.Observe(3*time.Millisecond, &apierr.Error{Code: apierr.CodeNoCapacity, Extra: map[string]any{"reasons": map[string]any{"CPUFit": 3}}})
	metrics.Subscriptions(reg, func() int { return 2 })
	h := httpapi.New(httpapi.Deps{Client: env.Client, Registry: reg, Logger: slog.New(slog.DiscardHandler), Identity: env.Identity,
		GraphQL: graph.DefaultOptions()})
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/healthz", nil)) // one request: HTTP series exist
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+gqltest.AdminToken) // /metrics needs a token
	h.ServeHTTP(rec, req)
	body := rec.Body.Bytes()
	names := map[string]bool{}
	for _, n := range metricName.FindAllString(string(body), -1) {
		names[n] = true
	}
	return names, body
}

// deployExprs returns the PromQL expressions of the alert rules and the Grafana dashboard.
func deployExprs(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	raw, err := os.ReadFile("../../deploy/prometheus/rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct{ Alert, Expr string }
		}
	}
	if err := yaml.Unmarshal(raw, &rules); err != nil {
		t.Fatalf("rules.yml: %v", err)
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			out["rule "+r.Alert] = r.Expr
		}
	}
	raw, err = os.ReadFile("../../deploy/grafana/virtflow.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("virtflow.json: %v", err)
	}
	for _, p := range dash.Panels {
		for i, tg := range p.Targets {
			out["panel "+p.Title+" "+string(rune('A'+i))] = tg.Expr
		}
	}
	return out
}

// TestDeployReferencesExistingMetrics fails when an alert rule or a dashboard panel names a
// metric VirtFlow does not expose (renamed, removed or misspelt).
func TestDeployReferencesExistingMetrics(t *testing.T) {
	names, _ := exposed(t)
	exprs := deployExprs(t)
	if len(exprs) < 10 {
		t.Fatalf("only %d expressions found in deploy/", len(exprs))
	}
	for where, e := range exprs {
		for _, n := range metricName.FindAllString(e, -1) {
			if !names[n] {
				known := make([]string, 0, len(names))
				for k := range names {
					known = append(known, k)
				}
				sort.Strings(known)
				t.Errorf("%s uses %s, which is not exposed (known: %s)", where, n, strings.Join(known, ", "))
			}
		}
	}
}

// TestPromtool runs Prometheus' promtool on the rules and on a scrape of the server's
// /metrics. .ci/run installs it (Debian package prometheus).
func TestPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (Debian package prometheus; .ci/run installs it)")
	}
	if out, err := exec.Command(promtool, "check", "rules", filepath.Join("..", "..", "deploy", "prometheus", "rules.yml")).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	_, body := exposed(t)
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}
