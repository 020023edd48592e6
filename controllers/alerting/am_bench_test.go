package alerting_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/virtflow/virtflow/controllers/alerting"
	"github.com/virtflow/virtflow/ent/alert"
	"github.com/virtflow/virtflow/ent/host"
)

// amBatch is an Alertmanager webhook of n firing alerts: one alert name per ten, the
// instance label naming one of hosts (or an unknown machine for every third alert).
func amBatch(n int, hosts []string, status string) []byte {
	w := alerting.AMWebhook{Version: "4", Status: status, Receiver: "virtflow", CommonLabels: map[string]string{"job": "node"}}
	for i := range n {
		inst := fmt.Sprintf("unknown-%d:9100", i)
		if i%3 != 0 && len(hosts) > 0 {
			inst = hosts[i%len(hosts)] + ":9100"
		}
		w.Alerts = append(w.Alerts, alerting.AMAlert{Status: status, Fingerprint: fmt.Sprintf("fp%06d", i),
			Labels:      map[string]string{"alertname": fmt.Sprintf("Alert%d", i/10), "instance": inst, "severity": "critical"},
			Annotations: map[string]string{"summary": fmt.Sprintf("alert %d is firing", i)}, StartsAt: time.Now()})
	}
	b, _ := json.Marshal(w)
	return b
}

// BenchmarkAlertmanagerBatch measures the Alertmanager receiver on PostgreSQL through its
// HTTP handler: per iteration, one POST of alerting.MaxAMAlerts firing alerts (new
// fingerprints: each is raised, audited and routed), then one POST resolving them. It
// reports the milliseconds of each POST.
func BenchmarkAlertmanagerBatch(b *testing.B) {
	db, s := site(b, 20)
	c := db.Client
	var hosts []string
	for _, n := range s.Nodes {
		hosts = append(hosts, c.Host.Query().Where(host.ID(n.HostID)).OnlyX(sys()).Name)
	}
	recv := httptest.NewServer(operatorOnly(alerting.AlertmanagerHandler(c, quiet())))
	defer recv.Close()
	post := func(body []byte) time.Duration {
		start := time.Now()
		req, _ := http.NewRequest(http.MethodPost, recv.URL+alerting.AlertmanagerPath, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer am-token")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("HTTP %d", resp.StatusCode)
		}
		return time.Since(start)
	}
	var firing, resolved time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		firing += post(amBatch(alerting.MaxAMAlerts, hosts, "firing"))
		resolved += post(amBatch(alerting.MaxAMAlerts, hosts, "resolved"))
	}
	b.ReportMetric(float64(firing.Milliseconds())/float64(b.N), "ms/firing-post")
	b.ReportMetric(float64(resolved.Milliseconds())/float64(b.N), "ms/resolved-post")
}

// TestAlertmanagerBatchSemantics: what a batch does is what its alerts would do one POST
// at a time. A rack alert (a cause) raised first in a batch suppresses the host alerts
// after it; resolving it in a later batch releases them; an alert fired and resolved in
// one batch ends closed; a resolve of an alert not open closes nothing.
func TestAlertmanagerBatchSemantics(t *testing.T) {
	db, s := site(t, 2)
	c, ctx := db.Client, sys()
	rackName := c.Rack.GetX(ctx, s.Racks[0].ID).Name
	var hosts []string
	for _, n := range s.Nodes {
		hosts = append(hosts, c.Host.Query().Where(host.ID(n.HostID)).OnlyX(ctx).Name)
	}
	recv := httptest.NewServer(operatorOnly(alerting.AlertmanagerHandler(c, quiet())))
	defer recv.Close()
	post := func(alerts ...alerting.AMAlert) map[string]any {
		t.Helper()
		b, _ := json.Marshal(alerting.AMWebhook{Version: "4", Status: "firing", Alerts: alerts})
		req, _ := http.NewRequest(http.MethodPost, recv.URL+alerting.AlertmanagerPath, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer am-token")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("HTTP %d %v", resp.StatusCode, out)
		}
		return out
	}
	am := func(status, fp string, labels map[string]string) alerting.AMAlert {
		return alerting.AMAlert{Status: status, Fingerprint: fp, Labels: labels}
	}
	post(am("firing", "rack", map[string]string{"alertname": "RackDown", "rack": rackName}),
		am("firing", "h0", map[string]string{"alertname": "Disk", "instance": hosts[0] + ":9100"}),
		am("firing", "h1", map[string]string{"alertname": "Disk", "host": hosts[1]}),
		am("firing", "flash", map[string]string{"alertname": "Flash"}),
		am("resolved", "flash", map[string]string{"alertname": "Flash"}),
		am("resolved", "never", map[string]string{"alertname": "Never"}))
	cause := c.Alert.Query().Where(alert.Fingerprint("alertmanager:rack")).OnlyX(ctx)
	if n := c.Alert.Query().Where(alert.HasSuppressedByWith(alert.ID(cause.ID)), alert.StatusEQ(alert.StatusOpen)).CountX(ctx); n != 2 {
		t.Fatalf("%d host alerts suppressed by the rack alert, want 2", n)
	}
	if a := c.Alert.Query().Where(alert.Fingerprint("alertmanager:flash")).OnlyX(ctx); a.Status != alert.StatusClosed {
		t.Fatalf("alert fired and resolved in one batch is %s", a.Status)
	}
	out := post(am("resolved", "rack", map[string]string{"alertname": "RackDown", "rack": rackName}),
		am("resolved", "h1", map[string]string{"alertname": "Disk", "host": hosts[1]}))
	if out["resolved"] != float64(2) {
		t.Fatalf("second batch: %v", out)
	}
	if n := c.Alert.Query().Where(alert.StatusEQ(alert.StatusOpen), alert.HasSuppressedBy()).CountX(ctx); n != 0 {
		t.Fatalf("%d open alerts still suppressed after the cause resolved", n)
	}
	if a := c.Alert.Query().Where(alert.Fingerprint("alertmanager:h0")).OnlyX(ctx); a.Status != alert.StatusOpen {
		t.Fatalf("h0's alert is %s, want OPEN", a.Status)
	}
}
