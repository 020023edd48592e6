package alerting_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/controllers/alerting"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/alert"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/internal/testkit/poll"
)

// operatorOnly stands for the server's bearer-token middleware: the token "am-token" is an
// operator, any other is nobody.
func operatorOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer am-token" {
			r = r.WithContext(authz.NewContext(r.Context(), &authz.Viewer{Name: "alertmanager",
				Bindings: []authz.Binding{{Role: authz.RoleOperator, Domain: authz.Platform}}}))
		}
		next.ServeHTTP(w, r)
	})
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestAlertmanagerWebhook: a real Prometheus Alertmanager, configured with VirtFlow's
// receiver as its webhook (bearer token), delivers a firing alert whose instance label
// names a host: it becomes one VirtFlow alert on that host (and its node); resolving it in
// Alertmanager closes it. A request without the token is refused.
func TestAlertmanagerWebhook(t *testing.T) {
	bin := os.Getenv("VIRTFLOW_TEST_ALERTMANAGER")
	if bin == "" {
		bin, _ = exec.LookPath("prometheus-alertmanager")
	}
	if bin == "" {
		t.Skip("prometheus-alertmanager (Debian package prometheus-alertmanager) is not installed; .ci/run installs it")
	}
	db, s := site(t, 2)
	c := db.Client
	ctx := sys()
	target := s.Nodes[1]
	hostName := c.Host.Query().Where(host.ID(target.HostID)).OnlyX(ctx).Name

	recv := httptest.NewServer(operatorOnly(alerting.AlertmanagerHandler(c, quiet())))
	defer recv.Close()
	resp, err := http.Post(recv.URL+alerting.AlertmanagerPath, "application/json", strings.NewReader(`{"version":"4","alerts":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without a token: HTTP %d, want 401", resp.StatusCode)
	}

	dir := t.TempDir()
	cfg := fmt.Sprintf(`route:
  receiver: virtflow
  group_by: [alertname, instance]
  group_wait: 0s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: virtflow
    webhook_configs:
      - url: %s%s
        send_resolved: true
        http_config:
          authorization:
            type: Bearer
            credentials: am-token
`, recv.URL, alerting.AlertmanagerPath)
	if err := os.WriteFile(filepath.Join(dir, "am.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	amURL := fmt.Sprintf("http://127.0.0.1:%d", port)
	actx, cancel := context.WithCancel(context.Background())
	am := exec.CommandContext(actx, bin, "--config.file="+filepath.Join(dir, "am.yml"), "--storage.path="+dir,
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port), "--cluster.listen-address=")
	var logs bytes.Buffer
	am.Stdout, am.Stderr = &logs, &logs
	if err := am.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = am.Wait()
		if t.Failed() {
			t.Logf("alertmanager output:\n%s", logs.String())
		}
	})
	poll.Until(t, 20*time.Second, func() error {
		r, err := http.Get(amURL + "/-/ready")
		if err != nil {
			return fmt.Errorf("alertmanager not ready: %w", err)
		}
		r.Body.Close()
		if r.StatusCode != http.StatusOK {
			return fmt.Errorf("alertmanager not ready: HTTP %d", r.StatusCode)
		}
		return nil
	})

	post := func(endsAt time.Time) {
		t.Helper()
		b, _ := json.Marshal([]map[string]any{{
			"labels":      map[string]string{"alertname": "NodeExporterDown", "instance": hostName + ":9100", "severity": "critical"},
			"annotations": map[string]string{"summary": "node exporter unreachable"},
			"startsAt":    time.Now().Add(-time.Minute).Format(time.RFC3339), "endsAt": endsAt.Format(time.RFC3339)}})
		r, err := http.Post(amURL+"/api/v2/alerts", "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != http.StatusOK {
			t.Fatalf("post to alertmanager: HTTP %d", r.StatusCode)
		}
	}
	post(time.Now().Add(time.Hour))
	var got *ent.Alert
	poll.Until(t, 30*time.Second, func() error {
		as, err := c.Alert.Query().Where(alert.Source("alertmanager")).WithHost().WithNode().All(ctx)
		if err != nil || len(as) == 0 {
			return fmt.Errorf("no alert from Alertmanager yet (%v)", err)
		}
		got = as[0]
		return nil
	})
	if got.Edges.Host == nil || got.Edges.Host.ID != target.HostID || got.Edges.Node == nil || got.Edges.Node.ID != target.ID {
		t.Errorf("alert %q on host %v node %v, want host %d node %d", got.Name, got.Edges.Host, got.Edges.Node, target.HostID, target.ID)
	}
	if got.Severity != alert.SeverityCritical || got.Message != "node exporter unreachable" ||
		got.Name != "NodeExporterDown on "+hostName || got.Labels["instance"] != hostName+":9100" {
		t.Errorf("alert %q %s %q labels %v", got.Name, got.Severity, got.Message, got.Labels)
	}

	post(time.Now().Add(-time.Second)) // resolved in Alertmanager
	poll.Until(t, 30*time.Second, func() error {
		a, err := c.Alert.Get(ctx, got.ID)
		if err != nil || a.Status != alert.StatusClosed || a.ClosedBy != "alertmanager" {
			return fmt.Errorf("alert not closed by alertmanager after it resolved (%v)", err)
		}
		return nil
	})
	if n := c.Alert.Query().Where(alert.Source("alertmanager")).CountX(ctx); n != 1 {
		t.Errorf("%d alerts from Alertmanager, want 1", n)
	}
}
