package app_test

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/virtflow/virtflow/controllers/alerting"
)

// amAlerts is an Alertmanager webhook body of n firing alerts, each changed by edit.
func amAlerts(n int, edit func(i int, a map[string]any)) []byte {
	alerts := make([]map[string]any, n)
	for i := range alerts {
		alerts[i] = map[string]any{"status": "firing", "fingerprint": fmt.Sprintf("lim%05d", i),
			"labels":      map[string]any{"alertname": "Limits", "instance": fmt.Sprintf("m%d:9100", i)},
			"annotations": map[string]any{"summary": "s"}}
		if edit != nil {
			edit(i, alerts[i])
		}
	}
	b, _ := json.Marshal(map[string]any{"version": "4", "status": "firing", "alerts": alerts})
	return b
}

// TestAlertmanagerReceiverLimits: through the real server on PostgreSQL, the Alertmanager
// receiver refuses bad input with 4xx and a JSON error with a code — a 3 MB summary, a NUL
// in a label (PostgreSQL text cannot hold it), a body that is not UTF-8, a body over the
// size limit, more alerts than MaxAMAlerts — and stores nothing of them; the largest batch
// it accepts is stored whole. Times are logged.
func TestAlertmanagerReceiverLimits(t *testing.T) {
	srv, dsn := pgStack(t, nil)
	post := func(body []byte) (int, map[string]any, time.Duration) {
		t.Helper()
		began := time.Now()
		req, _ := http.NewRequest(http.MethodPost, srv.url(alerting.AlertmanagerPath), bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testAdminToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		took := time.Since(began)
		var out map[string]any
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("HTTP %d, body not JSON: %s", resp.StatusCode, raw)
		}
		return resp.StatusCode, out, took
	}
	for _, tc := range []struct {
		name   string
		body   []byte
		status int
		code   string
		field  string
	}{
		{"3 MB summary", amAlerts(1, func(_ int, a map[string]any) {
			a["annotations"] = map[string]any{"summary": strings.Repeat("x", 3<<20)}
		}), http.StatusBadRequest, "VALIDATION", "alerts[0].annotations.summary"},
		{"NUL in a label", amAlerts(3, func(i int, a map[string]any) {
			if i == 2 {
				a["labels"].(map[string]any)["job"] = "node\x00exporter"
			}
		}), http.StatusBadRequest, "VALIDATION", "alerts[2].labels.job"},
		{"NUL in a label name", amAlerts(1, func(_ int, a map[string]any) {
			a["labels"].(map[string]any)["a\x00b"] = "v"
		}), http.StatusBadRequest, "VALIDATION", `alerts[0].labels.a\0b`},
		{"long label value", amAlerts(1, func(_ int, a map[string]any) {
			a["labels"].(map[string]any)["job"] = strings.Repeat("j", alerting.MaxAMLabelValue+1)
		}), http.StatusBadRequest, "VALIDATION", "alerts[0].labels.job"},
		{"not UTF-8", bytes.Replace(amAlerts(1, nil), []byte(`"s"`), []byte("\"\xff\xfe\""), 1), http.StatusBadRequest, "BAD_REQUEST", ""},
		{"body over the limit", amAlerts(1, func(_ int, a map[string]any) {
			a["annotations"] = map[string]any{"summary": strings.Repeat("x", alerting.MaxAMBody)}
		}), http.StatusRequestEntityTooLarge, alerting.CodePayloadTooLarge, ""},
		{"too many alerts", amAlerts(alerting.MaxAMAlerts+1, nil), http.StatusRequestEntityTooLarge, alerting.CodePayloadTooLarge, ""},
		{"10,000 alerts", amAlerts(10_000, nil), http.StatusRequestEntityTooLarge, alerting.CodePayloadTooLarge, ""},
	} {
		status, out, took := post(tc.body)
		if status != tc.status || out["code"] != tc.code || (tc.field != "" && out["field"] != tc.field) {
			t.Errorf("%s: HTTP %d %v, want %d %s field %q", tc.name, status, out, tc.status, tc.code, tc.field)
			continue
		}
		t.Logf("%s (%d bytes): HTTP %d %s in %v: %v", tc.name, len(tc.body), status, tc.code, took, out["error"])
	}
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	count := func() int {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM alerts`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 0 {
		t.Fatalf("%d alerts stored from refused webhooks", n)
	}
	status, out, took := post(amAlerts(alerting.MaxAMAlerts, nil))
	if status != http.StatusOK || out["raised"] != float64(alerting.MaxAMAlerts) {
		t.Fatalf("largest batch: HTTP %d %v", status, out["raised"])
	}
	if n := count(); n != alerting.MaxAMAlerts {
		t.Fatalf("%d alerts stored, want %d", n, alerting.MaxAMAlerts)
	}
	t.Logf("largest accepted batch (%d alerts) stored in %v", alerting.MaxAMAlerts, took)
}
