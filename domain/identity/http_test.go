package identity

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
)

func TestMiddleware(t *testing.T) {
	f := newFixture(t)
	u := f.user("")
	plain, tok := f.token(u)

	var seen *authz.Viewer
	var seenIP string
	var called bool
	h := f.svc.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		called = true
		seen = authz.FromContext(r.Context())
		seenIP = SourceIP(r.Context())
	}))
	do := func(remote string, header ...string) *httptest.ResponseRecorder {
		t.Helper()
		called, seen, seenIP = false, nil, ""
		r := httptest.NewRequest(http.MethodPost, "/graphql", nil)
		r.RemoteAddr = remote
		r.Header.Set("X-Forwarded-For", "10.9.9.9")
		for _, v := range header {
			r.Header.Add("Authorization", v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}

	// No header: anonymous, with the source address.
	if w := do("192.0.2.7:4000"); w.Code != http.StatusOK || !called || seen != nil || seenIP != "192.0.2.7" {
		t.Fatalf("anonymous: %d called=%v viewer=%v ip=%q", w.Code, called, seen, seenIP)
	}
	// A valid token: its viewer, seen from RemoteAddr (not X-Forwarded-For).
	if w := do("[2001:db8::5]:4000", "Bearer "+plain); w.Code != http.StatusOK || seen == nil ||
		seen.TokenID != tok.ID || seen.SourceIP != "2001:db8::5" || seenIP != "2001:db8::5" {
		t.Fatalf("valid token: %d viewer=%+v ip=%q", w.Code, seen, seenIP)
	}
	if w := do("[::ffff:192.0.2.8]:4000", "bearer  "+plain+" "); w.Code != http.StatusOK || seen == nil || seen.SourceIP != "192.0.2.8" {
		t.Fatalf("lower-case scheme: %d viewer=%+v", w.Code, seen)
	}

	unknown, _, _ := NewToken("API")
	for _, hdr := range [][]string{
		{"Bearer " + unknown},
		{"Bearer "},
		{""},
		{"Basic dXNlcjpwYXNz"},
		{plain},
		{"Bearer " + plain + " extra"},
		{"Bearer " + plain, "Bearer " + plain},
	} {
		w := do("192.0.2.7:4000", hdr...)
		if w.Code != http.StatusUnauthorized || called {
			t.Fatalf("%q: status %d, handler called %v", hdr, w.Code, called)
		}
		var body struct {
			Errors []struct {
				Message    string
				Extensions struct{ Code string }
			}
		}
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
			t.Fatalf("%q: body %q: %v", hdr, w.Body, err)
		}
		if len(body.Errors) != 1 || body.Errors[0].Extensions.Code != "UNAUTHENTICATED" || body.Errors[0].Message == "" {
			t.Fatalf("%q: body %s", hdr, w.Body)
		}
		if ct := w.Header().Get("Content-Type"); ct != "application/json; charset=utf-8" {
			t.Fatalf("content type %q", ct)
		}
	}
	// A token allowed from some networks only is checked against RemoteAddr.
	netPlain, _ := f.token(u, cidrs("10.0.0.0/8"))
	if w := do("10.9.9.9:1", "Bearer "+netPlain); w.Code != http.StatusOK {
		t.Fatalf("from an allowed network: %d", w.Code)
	}
	if w := do("192.0.2.7:1", "Bearer "+netPlain); w.Code != http.StatusUnauthorized {
		t.Fatalf("from elsewhere (X-Forwarded-For in the allowed network): %d", w.Code)
	}
}

func TestWebsocketInit(t *testing.T) {
	f := newFixture(t)
	u := f.user("")
	plain, tok := f.token(u, cidrs("203.0.113.0/24"))
	base := WithSourceIP(context.Background(), "203.0.113.4")

	ctx, err := f.svc.WebsocketInit(base, map[string]any{})
	if err != nil || authz.FromContext(ctx) != nil {
		t.Fatalf("no authorization: %v, viewer %v", err, authz.FromContext(ctx))
	}
	for _, key := range []string{"Authorization", "authorization"} {
		ctx, err := f.svc.WebsocketInit(base, map[string]any{key: "Bearer " + plain})
		if err != nil {
			t.Fatal(err)
		}
		if v := authz.FromContext(ctx); v == nil || v.TokenID != tok.ID || v.SourceIP != "203.0.113.4" {
			t.Fatalf("%s: viewer %+v", key, v)
		}
	}
	for _, payload := range []map[string]any{
		{"Authorization": "Bearer vf_nope"},
		{"Authorization": plain},
		{"authorization": 42},
	} {
		_, err := f.svc.WebsocketInit(base, payload)
		wantCode(t, err, apierr.CodeUnauthenticated)
	}
	// The source address comes from the context: outside the token's networks, refused.
	_, err = f.svc.WebsocketInit(WithSourceIP(context.Background(), "192.0.2.1"), map[string]any{"Authorization": "Bearer " + plain})
	wantCode(t, err, apierr.CodeUnauthenticated)
}
