package httpapi

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/virtflow/virtflow/controllers/alerting"
	"github.com/virtflow/virtflow/controllers/imagestore"
	"github.com/virtflow/virtflow/domain/guest"
	"github.com/virtflow/virtflow/domain/identity"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/frontend"
	"github.com/virtflow/virtflow/gateway/console"
	"github.com/virtflow/virtflow/gateway/playground"
	"github.com/virtflow/virtflow/gateway/usagegraph"
	"github.com/virtflow/virtflow/graph"
)

// MaxRequestBytes bounds a GraphQL request body.
const MaxRequestBytes = 1 << 20

// Deps are what the HTTP surface is built from.
type Deps struct {
	Client  *ent.Client
	Logger  *slog.Logger
	GraphQL graph.Options
	// Checks are pinged by /readyz, by name (e.g. "database", "redis").
	Checks map[string]Checker
	// Registry receives the process metrics; nil means a new registry with Go and process collectors.
	Registry *prometheus.Registry
	// Identity authenticates bearer tokens on /query.
	Identity *identity.Service
	// Images holds image bytes: /images/{id}/data is served when it is set.
	Images *imagestore.Store
	// Guest records guests' calls to GuestReadyPath; nil serves no such path.
	Guest *guest.Service
	// Metrics says who reads /metrics: by default a bearer token (Metrics.Token, or an
	// operator's or admin's API token).
	Metrics MetricsAccess
	// Console serves VM consoles (users' and agents' websockets); nil serves none.
	Console *console.Broker
	// Usage answers the dashboard's usage graphs (GET /api/usage); nil serves none.
	Usage *usagegraph.Service
}

// New returns the handler of every VirtFlow path.
func New(d Deps) http.Handler {
	reg := d.Registry
	if reg == nil {
		reg = prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	m := newHTTPMetrics(reg)
	opts := d.GraphQL
	opts.Logger = d.Logger
	opts.RequestID = RequestID
	opts.Identity = d.Identity

	mux := http.NewServeMux()
	route := func(pattern, name string, h http.Handler) { mux.Handle(pattern, observe(name, d.Logger, m, h)) }
	route("/query", "/query", limitBody(MaxRequestBytes, d.Identity.Middleware(graph.NewHandler(d.Client, opts))))
	pg := http.StripPrefix("/playground", playground.Handler("VirtFlow GraphiQL", "/query"))
	route("/playground", "/playground", pg)
	route("/playground/", "/playground", pg)
	if d.Guest != nil {
		// No identity middleware: the guest's credential is not an API token.
		route("POST "+GuestReadyPath, GuestReadyPath, guestReady(d.Guest, d.Logger))
	}
	route("GET /api/racks/{id}/elevation.svg", "/api/racks/elevation.svg", d.Identity.Middleware(elevationSVG(d.Client, d.Logger)))
	clock := opts.Clock
	if clock == nil {
		clock = time.Now
	}
	route("GET /api/tenants/{id}/usage.csv", "/api/tenants/usage.csv", d.Identity.Middleware(usageCSV(d.Client, clock, d.Logger)))
	if d.Images != nil {
		route("GET /images/{id}/data", "/images/data", d.Identity.Middleware(imageData(d.Images, d.Logger)))
		route("PUT /images/{id}/data", "/images/data", d.Identity.Middleware(imageUpload(d.Images, d.Logger)))
	}
	if d.Console != nil {
		for pattern, h := range d.Console.Handlers() {
			route(pattern, strings.TrimPrefix(pattern, "GET "), d.Identity.Middleware(h))
		}
		// Prometheus finds the agents connected to this server here (http_sd_configs).
		route("GET /api/prometheus/targets", "/api/prometheus/targets", d.Identity.Middleware(usagegraph.SDHandler(func() []usagegraph.Target {
			var out []usagegraph.Target
			for _, t := range d.Console.MetricsTargets() {
				out = append(out, usagegraph.Target{Node: t.Node, Addr: t.Addr})
			}
			return out
		})))
	}
	if d.Usage != nil {
		route("GET /api/usage", "/api/usage", d.Identity.Middleware(d.Usage.Handler()))
	}
	route("POST "+alerting.AlertmanagerPath, alerting.AlertmanagerPath, d.Identity.Middleware(alerting.AlertmanagerHandler(d.Client, d.Logger)))
	route("GET /healthz", "/healthz", http.HandlerFunc(healthz))
	route("GET /readyz", "/readyz", readyz(d.Checks))
	if d.Metrics.Elsewhere {
		route("/metrics", "/metrics", http.NotFoundHandler()) // served on --metrics-addr only
	} else {
		route("GET /metrics", "/metrics", metricsGuard(promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}), d.Metrics.Token, d.Identity))
	}
	route("GET /version", "/version", http.HandlerFunc(versionHandler))
	route("/", "/", frontend.Handler())
	return withRequestID(securityHeaders(compress(mux)))
}

// OpsDeps are what a process without the API (the worker) serves on its --addr.
type OpsDeps struct {
	Logger *slog.Logger
	// Checks are pinged by /readyz, by name.
	Checks map[string]Checker
	// Registry holds the process's metrics, served on /metrics.
	Registry *prometheus.Registry
	// MetricsToken, when set, is the bearer token /metrics requires.
	MetricsToken string
}

// Ops returns the operations surface of a process without the API: /healthz, /readyz,
// /metrics (with OpsDeps.MetricsToken when set) and /version.
func Ops(d OpsDeps) http.Handler {
	m := newHTTPMetrics(d.Registry)
	mux := http.NewServeMux()
	route := func(pattern, name string, h http.Handler) { mux.Handle(pattern, observe(name, d.Logger, m, h)) }
	route("GET /healthz", "/healthz", http.HandlerFunc(healthz))
	route("GET /readyz", "/readyz", readyz(d.Checks))
	route("GET /metrics", "/metrics", metricsGuard(promhttp.HandlerFor(d.Registry, promhttp.HandlerOpts{Registry: d.Registry}), d.MetricsToken, nil))
	route("GET /version", "/version", http.HandlerFunc(versionHandler))
	return withRequestID(securityHeaders(compress(mux)))
}
