package worker_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"

	"github.com/virtflow/virtflow/controllers/worker"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// TestMonitorFromABrowser signs a browser in to asynqmon with the dashboard's token and
// opens the UI with the cookie alone.
func TestMonitorFromABrowser(t *testing.T) {
	env := gqltest.SQLite(t)
	h := worker.MonitorWithSessions(asynq.RedisClientOpt{Addr: miniredis.RunT(t).Addr()}, env.Identity.Middleware)
	do := func(method, path, token string, cookie *http.Cookie) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, path, nil)
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		if cookie != nil {
			r.AddCookie(cookie)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec
	}
	if rec := do("GET", "/asynqmon/signin", "", nil); rec.Code != 200 || !strings.Contains(rec.Body.String(), `src="signin.js"`) {
		t.Fatalf("signin page: %d %s", rec.Code, rec.Body)
	}
	if rec := do("GET", "/asynqmon/signin.js", "", nil); rec.Code != 200 || !strings.Contains(rec.Body.String(), "virtflow.token") {
		t.Fatalf("signin script: %d", rec.Code)
	}
	if rec := do("POST", "/asynqmon/session", "", nil); rec.Code != http.StatusUnauthorized {
		t.Fatalf("session without a token: %d", rec.Code)
	}
	if rec := do("GET", "/asynqmon/", "", nil); rec.Code != http.StatusUnauthorized {
		t.Fatalf("monitor without credentials: %d", rec.Code)
	}
	rec := do("POST", "/asynqmon/session", gqltest.AdminToken, nil)
	if rec.Code != http.StatusNoContent {
		t.Fatalf("session as admin: %d %s", rec.Code, rec.Body)
	}
	var cookie *http.Cookie
	for _, c := range rec.Result().Cookies() {
		if c.Name == worker.MonitorCookie {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Path != "/asynqmon" {
		t.Fatalf("cookie %+v: want HttpOnly, SameSite=Strict, Path=/asynqmon", cookie)
	}
	if rec := do("GET", "/asynqmon/", "", cookie); rec.Code != http.StatusOK {
		t.Fatalf("monitor with the cookie: %d %s", rec.Code, rec.Body)
	}
	if rec := do("GET", "/asynqmon/", "", &http.Cookie{Name: worker.MonitorCookie, Value: "vf_forged"}); rec.Code != http.StatusUnauthorized {
		t.Fatalf("monitor with a forged cookie: %d", rec.Code)
	}
	if rec := do("DELETE", "/asynqmon/session", "", nil); rec.Code != http.StatusNoContent || !strings.Contains(rec.Header().Get("Set-Cookie"), "Max-Age=0") {
		t.Fatalf("sign out: %d %q", rec.Code, rec.Header().Get("Set-Cookie"))
	}
}
