package alerting_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/virtflow/virtflow/alerting"
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
