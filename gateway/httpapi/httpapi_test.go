package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/virtflow/virtflow/authz"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/virtflow/virtflow/gateway/httpapi"
	"github.com/virtflow/virtflow/graph"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/poll"
)

// fakeCheck is a Checker whose answer the test sets.
type fakeCheck struct {
	err   error
	calls atomic.Int32
}

func (f *fakeCheck) Ping(context.Context) error { f.calls.Add(1); return f.err }

// server serves the full HTTP surface over a fresh SQLite database; checks are added to the
// database check.
func server(t *testing.T, checks map[string]httpapi.Checker) *httptest.Server {
	t.Helper()
	env := gqltest.SQLite(t)
	all := map[string]httpapi.Checker{"database": env.DB}
	for k, v := range checks {
		all[k] = v
	}
	h := httpapi.New(httpapi.Deps{
		Client:   env.Client,
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		GraphQL:  graph.DefaultOptions(),
		Checks:   all,
		Identity: env.Identity,
	})
	// Requests act as the admin unless a test sends its own Authorization header.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" && r.Header.Get("X-Test-Anonymous") == "" {
			r.Header.Set("Authorization", "Bearer "+gqltest.AdminToken)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, u string, header http.Header) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

type gqlResp struct {
	Data   map[string]any `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
}

func postQuery(t *testing.T, srv *httptest.Server, query string) (int, gqlResp) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query})
	resp, err := http.Post(srv.URL+"/query", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("POST /query: %v", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var r gqlResp
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("decode (HTTP %d): %v: %s", resp.StatusCode, err, raw)
	}
	return resp.StatusCode, r
}

func TestHealthz(t *testing.T) {
	srv := server(t, nil)
	resp, body := get(t, srv.URL+"/healthz", nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"ok"`) {
		t.Errorf("/healthz = %d %s, want 200 ok", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	// Only GET is routed to the health check (a POST falls through to the start page's 404).
	r, err := http.Post(srv.URL+"/healthz", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusMethodNotAllowed && r.StatusCode != http.StatusNotFound {
		t.Errorf("POST /healthz = %d, want 404 or 405", r.StatusCode)
	}
}

func TestReadyz(t *testing.T) {
	type readiness struct {
		Ready  bool              `json:"ready"`
		Checks map[string]string `json:"checks"`
	}
	tests := []struct {
		name       string
		redis      error
		queue      error
		wantStatus int
		wantChecks map[string]string
	}{
		{"all up", nil, nil, http.StatusOK, map[string]string{"database": "ok", "redis": "ok", "queue": "ok"}},
		{"redis down", errors.New("dial tcp 127.0.0.1:6379: connection refused"), nil, http.StatusServiceUnavailable,
			map[string]string{"database": "ok", "redis": "unavailable", "queue": "ok"}},
		{"two down", errors.New("x"), context.DeadlineExceeded, http.StatusServiceUnavailable,
			map[string]string{"database": "ok", "redis": "unavailable", "queue": "unavailable"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			redis, queue := &fakeCheck{err: tt.redis}, &fakeCheck{err: tt.queue}
			srv := server(t, map[string]httpapi.Checker{"redis": redis, "queue": queue})
			resp, body := get(t, srv.URL+"/readyz", nil)
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("/readyz = %d, want %d: %s", resp.StatusCode, tt.wantStatus, body)
			}
			var got readiness
			if err := json.Unmarshal([]byte(body), &got); err != nil {
				t.Fatalf("decode %s: %v", body, err)
			}
			if got.Ready != (tt.wantStatus == http.StatusOK) {
				t.Errorf("ready = %v with status %d", got.Ready, resp.StatusCode)
			}
			for name, want := range tt.wantChecks {
				if got.Checks[name] != want {
					t.Errorf("checks[%s] = %q, want %q (all: %v)", name, got.Checks[name], want, got.Checks)
				}
			}
			if strings.Contains(body, "connection refused") {
				t.Errorf("/readyz leaks the check's error: %s", body)
			}
			if redis.calls.Load() == 0 {
				t.Errorf("the redis check was never pinged")
			}
		})
	}
}

func TestReadyzChecksTimeOut(t *testing.T) {
	slow := checkerFunc(func(ctx context.Context) error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(30 * time.Second):
			return nil
		}
	})
	srv := server(t, map[string]httpapi.Checker{"redis": slow})
	start := time.Now()
	resp, body := get(t, srv.URL+"/readyz", nil)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, `"redis":"unavailable"`) {
		t.Errorf("/readyz with a hanging check = %d %s, want 503 naming redis", resp.StatusCode, body)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("/readyz took %v with a hanging check; want the 2s check timeout", d)
	}
}

type checkerFunc func(context.Context) error

func (f checkerFunc) Ping(ctx context.Context) error { return f(ctx) }

func TestMetrics(t *testing.T) {
	srv := server(t, nil)
	get(t, srv.URL+"/healthz", nil)
	postQuery(t, srv, `{ regions { totalCount } }`)
	get(t, srv.URL+"/no-such-file.js", nil)
	resp, body := get(t, srv.URL+"/metrics", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics = %d", resp.StatusCode)
	}
	for _, want := range []string{
		`virtflow_http_requests_total{code="200",method="GET",route="/healthz"} 1`,
		`virtflow_http_requests_total{code="200",method="POST",route="/query"} 1`,
		`virtflow_http_requests_total{code="404",method="GET",route="/"} 1`,
		`virtflow_http_request_duration_seconds_count{route="/query"} 1`,
		`go_goroutines`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

func TestPlaygroundAndDashboard(t *testing.T) {
	srv := server(t, nil)
	for _, tc := range []struct{ path, want string }{
		{"/playground", "graphiql"},
		{"/playground/", "graphiql"},
		{"/", `<div id="root">`},
		{"/racks/42", `<div id="root">`}, // the dashboard's own routes load the app
	} {
		resp, body := get(t, srv.URL+tc.path, nil)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s = %d", tc.path, resp.StatusCode)
			continue
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Errorf("GET %s Content-Type = %q, want text/html", tc.path, ct)
		}
		if !strings.Contains(body, tc.want) {
			t.Errorf("GET %s body lacks %q", tc.path, tc.want)
		}
	}
	// The playground points at the GraphQL endpoint.
	_, body := get(t, srv.URL+"/playground", nil)
	if !strings.Contains(body, `data-endpoint="/query"`) {
		t.Errorf("playground page does not name /query as its endpoint")
	}
}

func TestRequestID(t *testing.T) {
	srv := server(t, nil)
	generated := regexp.MustCompile(`^[0-9a-f]{16}$`)
	tests := []struct {
		name string
		sent string
		keep bool
	}{
		{"sane id kept", "req-42.abc_DEF", true},
		{"64 characters kept", strings.Repeat("a", 64), true},
		{"none sent", "", false},
		{"spaces replaced", "hello world", false},
		{"markup replaced", "<script>alert(1)</script>", false},
		{"newline-ish replaced", "a\tb", false},
		{"65 characters replaced", strings.Repeat("a", 65), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			if tt.sent != "" {
				h.Set("X-Request-ID", tt.sent)
			}
			resp, _ := get(t, srv.URL+"/healthz", h)
			got := resp.Header.Get("X-Request-ID")
			if tt.keep {
				if got != tt.sent {
					t.Errorf("X-Request-ID = %q, want %q echoed", got, tt.sent)
				}
				return
			}
			if !generated.MatchString(got) {
				t.Errorf("X-Request-ID = %q, want a fresh 16-hex-digit id", got)
			}
		})
	}
	if got := httpapi.RequestID(authz.SystemContext(context.Background(), "test")); got != "" {
		t.Errorf("RequestID(context without an id) = %q, want empty", got)
	}
	a, _ := get(t, srv.URL+"/healthz", nil)
	b, _ := get(t, srv.URL+"/healthz", nil)
	if a.Header.Get("X-Request-ID") == b.Header.Get("X-Request-ID") {
		t.Errorf("two requests got the same generated id %q", a.Header.Get("X-Request-ID"))
	}
}

func TestQueryBodyLimit(t *testing.T) {
	srv := server(t, nil)
	body := func(size int) []byte {
		// A valid request padded with a variable to exactly size bytes.
		head, tail := `{"query":"{ regions { totalCount } }","variables":{"pad":"`, `"}}`
		return []byte(head + strings.Repeat("x", size-len(head)-len(tail)) + tail)
	}

	t.Run("just under the limit is served", func(t *testing.T) {
		resp, err := http.Post(srv.URL+"/query", "application/json", bytes.NewReader(body(httpapi.MaxRequestBytes)))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(raw), `"totalCount":0`) {
			t.Errorf("1 MiB body: %d %.200s", resp.StatusCode, raw)
		}
	})

	t.Run("over the limit with Content-Length is 413", func(t *testing.T) {
		resp, err := http.Post(srv.URL+"/query", "application/json", bytes.NewReader(body(httpapi.MaxRequestBytes+1)))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("status %d, want 413: %.200s", resp.StatusCode, raw)
		}
		if !strings.Contains(string(raw), "too large") {
			t.Errorf("body %.200s does not say why", raw)
		}
	})

	t.Run("over the limit streamed without Content-Length is 413", func(t *testing.T) {
		// io.MultiReader hides the length, so the request is sent chunked.
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/query", io.MultiReader(bytes.NewReader(body(2*httpapi.MaxRequestBytes))))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if req.ContentLength != 0 && req.ContentLength != -1 {
			t.Fatalf("request had Content-Length %d; the test needs a chunked body", req.ContentLength)
		}
		if resp.StatusCode >= 500 {
			t.Fatalf("status %d for an oversized streamed body: %.200s", resp.StatusCode, raw)
		}
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("status %d, want 413 for an oversized streamed body: %.300s", resp.StatusCode, raw)
		}
	})
}

func TestMalformedRequests(t *testing.T) {
	srv := server(t, nil)
	tests := []struct {
		name, contentType, body string
		wantStatus              int
		wantMessage             string
	}{
		{"broken JSON", "application/json", `{not json`, http.StatusBadRequest, "invalid JSON at byte"},
		{"truncated JSON", "application/json", `{"query": "{ regions { totalCount } }"`, http.StatusBadRequest, "JSON ends too early"},
		{"unsupported content type", "text/plain", `hello`, http.StatusUnsupportedMediaType, "application/json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.Post(srv.URL+"/query", tt.contentType, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, tt.wantStatus, raw)
			}
			var r gqlResp
			if err := json.Unmarshal(raw, &r); err != nil || len(r.Errors) == 0 {
				t.Fatalf("body %s is not a GraphQL error response (%v)", raw, err)
			}
			if code := r.Errors[0].Extensions["code"]; code != "BAD_REQUEST" {
				t.Errorf("extensions.code = %v, want BAD_REQUEST: %s", code, raw)
			}
			if !strings.Contains(r.Errors[0].Message, tt.wantMessage) {
				t.Errorf("message %q does not contain %q", r.Errors[0].Message, tt.wantMessage)
			}
		})
	}
}

func TestQueryOverGET(t *testing.T) {
	srv := server(t, nil)
	resp, body := get(t, srv.URL+"/query?query="+url.QueryEscape(`{ regions { totalCount } }`), nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `{"data":{"regions":{"totalCount":0}}}`) {
		t.Errorf("GET /query = %d %s", resp.StatusCode, body)
	}
	// Mutations are not allowed over GET.
	q := `mutation { createRegion(input: {name: "viaget"}) { id } }`
	_, body = get(t, srv.URL+"/query?query="+url.QueryEscape(q), nil)
	if !strings.Contains(body, "errors") {
		t.Errorf("GET mutation was accepted: %s", body)
	}
	_, r := postQuery(t, srv, `{ regions(where: {name: "viaget"}) { totalCount } }`)
	if tc := r.Data["regions"].(map[string]any)["totalCount"]; tc != float64(0) {
		t.Errorf("a mutation sent over GET created a region")
	}
}

// wsMsg is a graphql-transport-ws message.
type wsMsg struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// readWS reads the next message that is not a ping or pong.
func readWS(ctx context.Context, t *testing.T, c *websocket.Conn) wsMsg {
	t.Helper()
	for {
		var m wsMsg
		if err := wsjson.Read(ctx, c, &m); err != nil {
			t.Fatalf("read websocket: %v", err)
		}
		if m.Type == "ping" {
			_ = wsjson.Write(ctx, c, wsMsg{Type: "pong"})
			continue
		}
		if m.Type == "pong" || m.Type == "ka" {
			continue
		}
		return m
	}
}

func TestWebsocketGraphQLTransportWS(t *testing.T) {
	srv := server(t, nil)
	postQuery(t, srv, `mutation { createRegion(input: {name: "tokyo1"}) { id } }`)
	ctx, cancel := context.WithTimeout(authz.SystemContext(context.Background(), "test"), 10*time.Second)
	defer cancel()
	u := "ws" + strings.TrimPrefix(srv.URL, "http") + "/query"
	c, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatalf("dial %s: %v", u, err)
	}
	defer c.CloseNow()
	if c.Subprotocol() != "graphql-transport-ws" {
		t.Errorf("negotiated subprotocol %q", c.Subprotocol())
	}
	if resp.Header.Get("X-Request-ID") == "" {
		t.Errorf("websocket handshake has no X-Request-ID")
	}

	if err := wsjson.Write(ctx, c, wsMsg{Type: "connection_init"}); err != nil {
		t.Fatal(err)
	}
	if m := readWS(ctx, t, c); m.Type != "connection_ack" {
		t.Fatalf("after connection_init got %+v, want connection_ack", m)
	}

	subscribe := func(id, query string) {
		payload, _ := json.Marshal(map[string]any{"query": query})
		if err := wsjson.Write(ctx, c, wsMsg{ID: id, Type: "subscribe", Payload: payload}); err != nil {
			t.Fatal(err)
		}
	}
	subscribe("1", `{ regions { totalCount edges { node { name } } } }`)
	m := readWS(ctx, t, c)
	if m.Type != "next" || m.ID != "1" {
		t.Fatalf("got %+v, want next for id 1", m)
	}
	if !strings.Contains(string(m.Payload), `"totalCount":1`) || !strings.Contains(string(m.Payload), `"tokyo1"`) {
		t.Errorf("next payload %s, want the one region tokyo1", m.Payload)
	}
	if m := readWS(ctx, t, c); m.Type != "complete" || m.ID != "1" {
		t.Errorf("got %+v, want complete for id 1", m)
	}

	// Errors travel over the socket with their code, and the limits apply there too.
	subscribe("2", deepQuery(20))
	m = readWS(ctx, t, c)
	if m.ID != "2" || (m.Type != "error" && m.Type != "next") || !strings.Contains(string(m.Payload), "VALIDATION") {
		t.Errorf("deep query over websocket: %+v %s, want a VALIDATION error", m, m.Payload)
	}
	if m.Type == "next" { // an error as a result is followed by complete
		if m := readWS(ctx, t, c); m.Type != "complete" || m.ID != "2" {
			t.Errorf("got %+v, want complete for id 2", m)
		}
	}

	// A second operation on the same connection works.
	subscribe("3", `{ __typename }`)
	if m := readWS(ctx, t, c); m.Type != "next" || m.ID != "3" || !strings.Contains(string(m.Payload), `"Query"`) {
		t.Errorf("got %+v %s, want next with __typename Query", m, m.Payload)
	}
	c.Close(websocket.StatusNormalClosure, "")

	// The upgraded request is counted as a 101 on /query.
	poll.Until(t, 3*time.Second, func() error {
		if _, body := get(t, srv.URL+"/metrics", nil); !strings.Contains(body, `virtflow_http_requests_total{code="101",method="GET",route="/query"} 1`) {
			return errors.New("/metrics does not count the websocket request as 101 on /query")
		}
		return nil
	})
}

func TestWebsocketLegacyGraphQLWS(t *testing.T) {
	srv := server(t, nil)
	ctx, cancel := context.WithTimeout(authz.SystemContext(context.Background(), "test"), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/query",
		&websocket.DialOptions{Subprotocols: []string{"graphql-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	_ = wsjson.Write(ctx, c, wsMsg{Type: "connection_init"})
	if m := readWS(ctx, t, c); m.Type != "connection_ack" {
		t.Fatalf("got %+v, want connection_ack", m)
	}
	payload, _ := json.Marshal(map[string]any{"query": `{ regions { totalCount } }`})
	_ = wsjson.Write(ctx, c, wsMsg{ID: "1", Type: "start", Payload: payload})
	if m := readWS(ctx, t, c); m.Type != "data" || !strings.Contains(string(m.Payload), `"totalCount":0`) {
		t.Errorf("got %+v %s, want data with totalCount 0", m, m.Payload)
	}
	if m := readWS(ctx, t, c); m.Type != "complete" {
		t.Errorf("got %+v, want complete", m)
	}
}

// deepQuery builds a valid query depth (≥ 2) levels deep, counting hops through the graph (the
// Relay wrappers edges and node are not levels): racks(first: 1) { edges { node { floor { … id } } } }.
func deepQuery(depth int) string {
	var b strings.Builder
	closing := 0
	for i := 0; i < depth-1; i++ {
		if i%2 == 0 {
			b.WriteString("racks(first: 1) { edges { node { ")
			closing += 3
		} else {
			b.WriteString("floor { ")
			closing++
		}
	}
	return "{ " + b.String() + "id" + strings.Repeat(" }", closing) + " }"
}

func TestDepthLimitOverHTTP(t *testing.T) {
	srv := server(t, nil)
	status, r := postQuery(t, srv, deepQuery(20))
	if len(r.Errors) == 0 {
		t.Fatalf("20-deep query accepted (HTTP %d): %v", status, r.Data)
	}
	if code := r.Errors[0].Extensions["code"]; code != "VALIDATION" {
		t.Errorf("code = %v, want VALIDATION: %s", code, r.Errors[0].Message)
	}
	if status >= 500 {
		t.Errorf("HTTP %d for a refused query", status)
	}
	if _, r := postQuery(t, srv, deepQuery(15)); len(r.Errors) != 0 {
		t.Errorf("15-deep query refused: %v", r.Errors)
	}
}

func TestComplexityLimitOverHTTP(t *testing.T) {
	srv := server(t, nil)
	q := `{ racks(first:1000){edges{node{hosts(first:1000){edges{node{ports(first:1000){totalCount}}}}}}} }`
	status, r := postQuery(t, srv, q)
	if len(r.Errors) == 0 {
		t.Fatalf("query that may return 10⁹ ports was executed (HTTP %d): data %v", status, r.Data)
	}
	if r.Data != nil {
		t.Errorf("refused query returned data %v", r.Data)
	}
	if !strings.Contains(r.Errors[0].Message, "complexity") {
		t.Errorf("error %q does not mention complexity", r.Errors[0].Message)
	}
}

// TestUnknownFileIs404: a missing file is 404; a path without an extension is one of the
// dashboard's routes and loads the app (which shows its own "not found" page).
func TestUnknownFileIs404(t *testing.T) {
	srv := server(t, nil)
	for _, p := range []string{"/does/not/exist.js", "/assets/missing.css", "/favicon.ico"} {
		if resp, _ := get(t, srv.URL+p, nil); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", p, resp.StatusCode)
		}
	}
	if resp, _ := get(t, srv.URL+"/does/not/exist", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("GET an app route = %d, want 200 (the dashboard)", resp.StatusCode)
	}
}
