package httpapi_test

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzhttp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/virtflow/virtflow/gateway/httpapi"
)

// rawClient does not ask for or undo compression by itself.
var rawClient = &http.Client{Transport: &http.Transport{DisableCompression: true}}

// fetch GETs u (with Accept-Encoding: gzip when gz) and returns the response, the bytes on
// the wire and the decoded body.
func fetch(t *testing.T, method, u, body string, gz bool) (*http.Response, int, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if gz {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	resp, err := rawClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	wire, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	plain := wire
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(strings.NewReader(string(wire)))
		if err != nil {
			t.Fatal(err)
		}
		if plain, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	return resp, len(wire), string(plain)
}

// TestFirstPageLoadGzipped loads the dashboard's page and the scripts and styles it names,
// as a browser's first visit does, and checks they travel gzip'd.
func TestFirstPageLoadGzipped(t *testing.T) {
	srv := server(t, nil)
	resp, wire, page := fetch(t, http.MethodGet, srv.URL+"/", "", true)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /: %d", resp.StatusCode)
	}
	rawTotal, wireTotal := len(page), wire
	assets := regexp.MustCompile(`(?:src|href)="(/assets/[^"]+)"`).FindAllStringSubmatch(page, -1)
	if len(assets) == 0 {
		t.Fatalf("the page names no assets:\n%s", page)
	}
	for _, a := range assets {
		resp, wire, body := fetch(t, http.MethodGet, srv.URL+a[1], "", true)
		// A file below gzhttp's minimum size travels as it is: compressing it saves nothing.
		small := len(body) < gzhttp.DefaultMinSize
		if resp.StatusCode != http.StatusOK || (resp.Header.Get("Content-Encoding") != "gzip" && !small) {
			t.Errorf("%s: status %d, Content-Encoding %q; want 200 gzip", a[1], resp.StatusCode, resp.Header.Get("Content-Encoding"))
		}
		rawTotal += len(body)
		wireTotal += wire
	}
	t.Logf("first page load (%d files): %d bytes raw, %d bytes gzip'd (%.0f%%)", len(assets)+1, rawTotal, wireTotal,
		100*float64(wireTotal)/float64(rawTotal))
	if wireTotal*2 > rawTotal {
		t.Errorf("gzip'd first page load %d bytes is not under half of %d raw", wireTotal, rawTotal)
	}
	// Without Accept-Encoding nothing is compressed.
	if resp, _, _ := fetch(t, http.MethodGet, srv.URL+assets[0][1], "", false); resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("compressed for a client that did not ask: %q", resp.Header.Get("Content-Encoding"))
	}
}

func TestGraphQLResponsesGzipped(t *testing.T) {
	srv := server(t, nil)
	resp, wire, body := fetch(t, http.MethodPost, srv.URL+"/query", `{"query":"{ __schema { types { name description } } }"}`, true)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("POST /query: %d, Content-Encoding %q, %d bytes", resp.StatusCode, resp.Header.Get("Content-Encoding"), wire)
	}
	if !strings.Contains(body, `"__schema"`) || wire >= len(body) {
		t.Fatalf("body %d bytes on the wire for %d: %.200s", wire, len(body), body)
	}
}

func TestSecurityHeaders(t *testing.T) {
	srv := server(t, nil)
	for _, path := range []string{"/", "/playground/", "/query", "/healthz", "/version"} {
		resp, _, _ := fetch(t, http.MethodGet, srv.URL+path, "", true)
		h := resp.Header
		if h.Get("Content-Security-Policy") != httpapi.ContentSecurityPolicy {
			t.Errorf("%s: Content-Security-Policy %q", path, h.Get("Content-Security-Policy"))
		}
		for k, v := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "same-origin"} {
			if h.Get(k) != v {
				t.Errorf("%s: %s = %q, want %q", path, k, h.Get(k), v)
			}
		}
	}
	// The policy forbids what the pages must never need: inline scripts and eval.
	for _, d := range strings.Split(httpapi.ContentSecurityPolicy, ";") {
		if d = strings.TrimSpace(d); strings.HasPrefix(d, "script-src") && d != "script-src 'self'" {
			t.Errorf("script-src is %q, want 'self' only", d)
		}
	}
	if strings.Contains(httpapi.ContentSecurityPolicy, "unsafe-eval") {
		t.Errorf("script-src allows inline scripts or eval: %s", httpapi.ContentSecurityPolicy)
	}
	_, _, page := fetch(t, http.MethodGet, srv.URL+"/", "", false)
	_, _, pg := fetch(t, http.MethodGet, srv.URL+"/playground/", "", false)
	inline := regexp.MustCompile(`<script(?:\s+type="module")?\s*>`)
	if inline.MatchString(page) || inline.MatchString(pg) {
		t.Errorf("an inline script would be blocked by script-src 'self'")
	}
}

func TestVersionEndpoint(t *testing.T) {
	srv := server(t, nil)
	resp, _, body := fetch(t, http.MethodGet, srv.URL+"/version", "", false)
	var v struct{ Version, GoVersion string }
	if err := json.Unmarshal([]byte(body), &v); resp.StatusCode != http.StatusOK || err != nil || v.Version == "" || v.GoVersion == "" {
		t.Fatalf("/version: %d %s (%v)", resp.StatusCode, body, err)
	}
}

// TestOpsSurface is the worker's port: health, readiness with its checks, metrics, version.
func TestOpsSurface(t *testing.T) {
	reg := prometheus.NewRegistry()
	down := &fakeCheck{}
	srv := httptest.NewServer(httpapi.Ops(httpapi.OpsDeps{Logger: slog.New(slog.DiscardHandler), Registry: reg,
		Checks: map[string]httpapi.Checker{"redis": down}}))
	defer srv.Close()
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200, "/metrics": 200, "/version": 200, "/query": 404} {
		if resp, _, _ := fetch(t, http.MethodGet, srv.URL+path, "", false); resp.StatusCode != want {
			t.Errorf("%s: %d, want %d", path, resp.StatusCode, want)
		}
	}
	if _, _, body := fetch(t, http.MethodGet, srv.URL+"/metrics", "", false); !strings.Contains(body, `virtflow_http_requests_total{code="200",method="GET",route="/healthz"}`) {
		t.Errorf("/metrics lacks the request counter:\n%.500s", body)
	}
}

// TestOpsMetricsToken: with a metrics token the worker's /metrics answers only it; its
// health and readiness stay open for probes.
func TestOpsMetricsToken(t *testing.T) {
	reg := prometheus.NewRegistry()
	srv := httptest.NewServer(httpapi.Ops(httpapi.OpsDeps{Logger: slog.New(slog.DiscardHandler), Registry: reg,
		MetricsToken: "ops-metrics-token"}))
	defer srv.Close()
	for _, c := range []struct {
		path, token string
		want        int
	}{{"/metrics", "", 401}, {"/metrics", "wrong", 401}, {"/metrics", "ops-metrics-token", 200}, {"/healthz", "", 200}} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+c.path, nil)
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("GET %s with %q: %d, want %d", c.path, c.token, resp.StatusCode, c.want)
		}
	}
}
