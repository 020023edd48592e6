package metrics_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/virtflow/virtflow/controllers/metrics"
	"github.com/virtflow/virtflow/demo"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// TestDomainMetrics scrapes the collector over HTTP, as Prometheus does, on the demo
// datacenter with a queued task, and parses the exposition with Prometheus' own parser.
func TestDomainMetrics(t *testing.T) {
	env := gqltest.SQLite(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if _, err := demo.Load(gqltest.System(), env.Client, log); err != nil {
		t.Fatal(err)
	}
	mr := miniredis.RunT(t)
	opt := asynq.RedisClientOpt{Addr: mr.Addr()}
	qc := asynq.NewClient(opt)
	defer qc.Close()
	if _, err := qc.EnqueueContext(context.Background(), asynq.NewTask("vm:create", []byte("{}")), asynq.Queue("default")); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(metrics.New(env.Client, opt, log))
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %d", resp.StatusCode)
	}
	// Legacy validation: names Prometheus and promtool accept without quoting.
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("the exposition does not parse: %v", err)
	}
	sum := func(name string, labels map[string]string) (float64, bool) {
		f := families[name]
		if f == nil {
			return 0, false
		}
		total, found := 0.0, false
	metric:
		for _, m := range f.Metric {
			for k, v := range labels {
				if !hasLabel(m, k, v) {
					continue metric
				}
			}
			total += m.GetGauge().GetValue()
			found = true
		}
		return total, found
	}
	if n, _ := sum("virtflow_nodes", nil); n != 336 {
		t.Errorf("virtflow_nodes total %v, want the demo's 336", n)
	}
	if n, _ := sum("virtflow_vms", nil); n != 18 {
		t.Errorf("virtflow_vms total %v, want the demo's 18", n)
	}
	if n, ok := sum("virtflow_queue_tasks", map[string]string{"queue": "default", "state": "pending"}); !ok || n != 1 {
		t.Errorf("pending tasks of queue default: %v (%v), want 1", n, ok)
	}
	for _, name := range []string{"virtflow_outbox_pending_tasks", "virtflow_outbox_oldest_pending_age_seconds",
		"virtflow_node_heartbeat_lag_max_seconds", "virtflow_queue_latency_seconds"} {
		if _, ok := sum(name, nil); !ok {
			t.Errorf("%s missing", name)
		}
	}
	for _, src := range []string{"database", "redis"} {
		if n, ok := sum("virtflow_domain_scrape_success", map[string]string{"source": src}); !ok || n != 1 {
			t.Errorf("scrape of %s failed", src)
		}
	}
}

func hasLabel(m *dto.Metric, k, v string) bool {
	for _, l := range m.Label {
		if l.GetName() == k && l.GetValue() == v {
			return true
		}
	}
	return false
}
