package httpapi

import (
	"net/http"
	"strings"

	"github.com/klauspost/compress/gzhttp"

	"github.com/virtflow/virtflow/internal/platform/version"
)

// ContentSecurityPolicy is the policy of every response. The dashboard and GraphiQL load
// only their own scripts (no inline scripts, no eval); both set inline style attributes,
// the dashboard's layout runs in a web worker, and subscriptions use a websocket to the
// same host.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self' ws: wss:; worker-src 'self' blob:; " +
	"object-src 'none'; base-uri 'self'; frame-ancestors 'none'; form-action 'self'"

// securityHeaders sets the browser hardening headers on every response.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=()")
		next.ServeHTTP(w, r)
	})
}

// compress gzips responses (assets, GraphQL results, SVGs) for clients that accept it;
// websocket upgrades and small bodies pass through untouched.
func compress(next http.Handler) http.Handler {
	gz := gzhttp.GzipHandler(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			next.ServeHTTP(w, r)
			return
		}
		gz.ServeHTTP(w, r)
	})
}

// versionHandler serves the running build's version as JSON.
func versionHandler(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, version.Get())
}
