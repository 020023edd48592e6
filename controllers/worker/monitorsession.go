package worker

import (
	"net/http"
	"strings"
	"time"

	"github.com/hibiken/asynq"

	"github.com/virtflow/virtflow/authz"
)

// MonitorCookie carries a signed-in admin's token to the Asynq web UI, which a browser
// cannot send a bearer header to. It is HttpOnly, SameSite=Strict (no cross-site request
// carries it, so asynqmon's actions cannot be forged from another site) and scoped to
// MonitorPath.
const MonitorCookie = "virtflow_asynqmon"

// monitorSessionTTL bounds the cookie's life; the token's own expiry and revocation still
// apply on every request.
const monitorSessionTTL = 12 * time.Hour

// MonitorWithSessions is Monitor reachable from a browser: MonitorPath+"/signin" is a page
// that hands the dashboard's token (kept in this origin's localStorage) to POST
// MonitorPath+"/session", which answers with MonitorCookie after checking the token is an
// admin's; requests without an Authorization header then authenticate with the cookie.
// DELETE MonitorPath+"/session" forgets it.
func MonitorWithSessions(redis asynq.RedisConnOpt, authenticate func(http.Handler) http.Handler) http.Handler {
	mon := Monitor(redis, authenticate)
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+MonitorPath+"/signin", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write([]byte(signinPage))
	})
	mux.HandleFunc("GET "+MonitorPath+"/signin.js", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		_, _ = w.Write([]byte(signinScript))
	})
	// The session is granted on the monitor's own terms: a read-write admin token.
	mux.Handle("POST "+MonitorPath+"/session", authenticate(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := authz.FromContext(r.Context())
		switch {
		case v == nil:
			http.Error(w, "sign in: send Authorization: Bearer <token>", http.StatusUnauthorized)
			return
		case v.ReadOnly || !v.HasRole(authz.RoleAdmin):
			http.Error(w, "the task queue monitor is for platform admins", http.StatusForbidden)
			return
		}
		token := strings.TrimSpace(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		http.SetCookie(w, &http.Cookie{Name: MonitorCookie, Value: token, Path: MonitorPath,
			MaxAge: int(monitorSessionTTL.Seconds()), HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure(r)})
		w.WriteHeader(http.StatusNoContent)
	})))
	mux.HandleFunc("DELETE "+MonitorPath+"/session", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: MonitorCookie, Path: MonitorPath, MaxAge: -1, HttpOnly: true,
			SameSite: http.SameSiteStrictMode, Secure: secure(r)})
		w.WriteHeader(http.StatusNoContent)
	})
	mux.Handle(MonitorPath+"/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			if c, err := r.Cookie(MonitorCookie); err == nil && c.Value != "" {
				r = r.Clone(r.Context())
				r.Header.Set("Authorization", "Bearer "+c.Value)
			}
		}
		mon.ServeHTTP(w, r)
	}))
	return mux
}

func secure(r *http.Request) bool {
	return r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https"
}

// signinPage and signinScript hand the dashboard's token to the session endpoint (the script
// is a file of its own: the Content-Security-Policy allows no inline script).
const signinPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>VirtFlow task queues</title>
<script src="signin.js" defer></script></head>
<body><p id="msg">Opening the task queue monitor…</p></body></html>
`

const signinScript = `(async () => {
  const msg = document.getElementById('msg');
  let token = null;
  try { token = localStorage.getItem('virtflow.token'); } catch (e) { /* storage disabled */ }
  if (!token) { msg.textContent = 'Sign in to the dashboard first (as a platform admin), then open this page again.'; return; }
  const r = await fetch('session', { method: 'POST', headers: { Authorization: 'Bearer ' + token }, credentials: 'same-origin' });
  if (r.ok) { location.replace('./'); return; }
  msg.textContent = r.status === 403 ? 'The task queue monitor is for platform admins with a read-write token.' : 'Sign-in failed: ' + r.status + ' ' + (await r.text());
})();
`
