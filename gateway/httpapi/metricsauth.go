package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/identity"
)

// MetricsAccess says who reads /metrics. The metrics name regions, clusters and fleet
// counts: they are not for everyone who can reach the API.
type MetricsAccess struct {
	// Elsewhere: /metrics is served on an address of its own (MetricsHandler), not with
	// the API (404 there).
	Elsewhere bool
	// Token, when set, is a bearer token that reads /metrics.
	Token string
}

// MetricsHandler serves reg's metrics on a metrics-only address (--metrics-addr), to
// anyone who reaches it, or only with "Authorization: Bearer <token>" when token is set.
func MetricsHandler(reg *prometheus.Registry, token string) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metricsGuard(promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}), token, nil))
	return mux
}

// metricsGuard lets a request through to h when it carries token as its bearer token
// (token set), or, when ids is not nil, an API token of a viewer who may change compute
// nodes (operators and admins); with neither token nor ids it lets everyone through.
// Others get 401 (no or unknown token) or 403.
func metricsGuard(h http.Handler, token string, ids *identity.Service) http.Handler {
	if token == "" && ids == nil {
		return h
	}
	want := sha256.Sum256([]byte(token))
	operator := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := authz.FromContext(r.Context())
		switch {
		case v == nil:
			refuseMetrics(w)
		case !v.Can("ComputeNode", authz.ActWrite):
			writeAPIError(w, http.StatusForbidden, apierr.Forbidden("only operators and admins read /metrics"))
		default:
			h.ServeHTTP(w, r)
		}
	})
	var authed http.Handler
	if ids != nil {
		authed = ids.Middleware(operator)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if ok && token != "" {
			got := sha256.Sum256([]byte(strings.TrimSpace(bearer)))
			if subtle.ConstantTimeCompare(got[:], want[:]) == 1 {
				h.ServeHTTP(w, r)
				return
			}
		}
		if authed == nil || !ok {
			refuseMetrics(w)
			return
		}
		authed.ServeHTTP(w, r)
	})
}

// refuseMetrics answers 401 asking for a bearer token.
func refuseMetrics(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="virtflow-metrics"`)
	writeAPIError(w, http.StatusUnauthorized, apierr.Unauthenticated("/metrics needs Authorization: Bearer <VIRTFLOW_METRICS_TOKEN or an operator's API token>"))
}
