package app

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/controllers/metrics"
	"github.com/virtflow/virtflow/controllers/provision"
	"github.com/virtflow/virtflow/controllers/worker"
	"github.com/virtflow/virtflow/demo"
	"github.com/virtflow/virtflow/demo/fleet"
	"github.com/virtflow/virtflow/domain/identity"
	"github.com/virtflow/virtflow/gateway/console"
	"github.com/virtflow/virtflow/gateway/httpapi"
	"github.com/virtflow/virtflow/gateway/livestatus"
	"github.com/virtflow/virtflow/gateway/usagegraph"
	"github.com/virtflow/virtflow/graph"
	"github.com/virtflow/virtflow/internal/platform/config"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/platform/telemetry"
	"github.com/virtflow/virtflow/internal/platform/version"
)

// RunServer runs the API server described by cfg until ctx ends. In embedded mode (no
// DATABASE_URL) it also runs the worker in the same process. ready, if not nil, receives the
// listening address once requests are served. Traces are exported as the OTEL_* environment
// says (telemetry.FromEnv).
func RunServer(ctx context.Context, cfg config.Config, log *slog.Logger, ready func(addr string)) error {
	tr, err := telemetry.FromEnv(ctx, "virtflow-server", version.Get().Version)
	if err != nil {
		return err
	}
	defer flushTraces(tr, log)
	return RunServerWith(ctx, cfg, log, Options{Ready: ready, Tracing: tr})
}

// Options are what RunServerWith and RunWorkerWith take beside the configuration.
type Options struct {
	// Ready, if not nil, receives the listening address once requests are served.
	Ready func(addr string)
	// Tracing is the process's tracer provider (telemetry.Off when nil); the caller shuts
	// it down.
	Tracing *telemetry.Tracing
}

// RunServerWith is RunServer with the tracing given.
func RunServerWith(ctx context.Context, cfg config.Config, log *slog.Logger, o Options) error {
	start := time.Now()
	ready := o.Ready
	var rec provision.ReconcileConfig
	if cfg.Embedded() {
		var err error
		if rec, err = reconcileConfig(); err != nil {
			return err
		}
	}
	tr := o.Tracing
	if tr == nil {
		tr = telemetry.Off()
	}
	db, err := infra.OpenDatabaseWith(ctx, cfg.DatabaseURL, cfg.DataDir, infra.OpenOptions{Log: log, Tracing: tr,
		MaxConns: cfg.DBMaxConns, NoStatementCache: !cfg.DBStatementCache})
	if err != nil {
		return err
	}
	defer db.Close()
	log.Info("database ready", "dialect", db.Dialect, "embedded", cfg.Embedded(), "data_dir", cfg.DataDir)

	redis, err := openRedis(ctx, cfg)
	if err != nil {
		return err
	}
	defer redis.Close()
	log.Info("redis ready", "embedded", redis.Embedded())

	// The egress policy and the sealed secrets; their write rules are hooks of the client.
	g, err := openGuards(cfg, log)
	if err != nil {
		return err
	}
	// Every ent hook, before anything uses the client.
	h := installHooks(db, redis, g, tr, log)
	// What starts from here on (the snapshot cache's and the hub's subscriptions, the
	// components) ends with ctx, by the time the database and Redis close.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := startSnapshots(ctx, h.snaps); err != nil {
		return err
	}
	if err := sealStored(ctx, db, g, log); err != nil {
		return err
	}
	reg := registry(db, redis, log)
	guests := guestService(cfg, db, redis)
	prov := provisioning(cfg, h.snaps, metrics.NewPlacement(reg).Observe, guests)
	// Authentication keeps what it read of a token for a few seconds; the hub's Credentials
	// events (from every replica, through Redis) drop it at once when it changes.
	viewers := &identity.ViewerCache{}
	hub := livestatus.NewHub(redis.Client, log.With("component", "livestatus"))
	hub.Channel = redis.Key("live")
	hub.Listeners = []livestatus.CredentialsListener{viewers}
	if err := hub.Start(ctx); err != nil {
		return err
	}
	metrics.Subscriptions(reg, hub.Subscribers)

	ids := &identity.Service{Client: db.Client, Redis: redis.Client, Log: log.With("component", "identity"), Cache: viewers,
		RateLimitPrefix: redis.Key("login:")}
	oneTimeToken, err := bootstrapAdmin(ctx, ids, db.Client, cfg.AdminToken, log)
	if err != nil {
		return err
	}

	if cfg.Demo {
		demoRuntimeMemory(os.Getenv, log)
		t := time.Now()
		stats, err := demo.Load(authz.SystemContext(ctx, "demo"), db.Client, log)
		if err != nil {
			return fmt.Errorf("load demo: %w", err)
		}
		log.Info("demo datacenter loaded", "already_loaded", stats.AlreadyLoaded, "duration_ms", time.Since(t).Milliseconds())
	}

	images, err := imageStore(cfg, db, g, log)
	if err != nil {
		return err
	}
	if err := adoptImages(ctx, images, db, cfg.Demo, log); err != nil {
		return err
	}

	opts := graph.DefaultOptions()
	opts.Provision = prov
	kube := kubeClusters(db, prov, g, log)
	opts.Kubernetes = kube
	opts.Introspection = cfg.Introspection
	opts.Live = hub
	handler := httpapi.New(httpapi.Deps{
		Client:   db.Client,
		Registry: reg,
		Logger:   log,
		GraphQL:  opts,
		Checks:   map[string]httpapi.Checker{"database": db, "redis": redis},
		Identity: ids,
		Images:   images,
		Guest:    guests,
		Metrics:  httpapi.MetricsAccess{Elsewhere: cfg.MetricsAddr != "", Token: cfg.MetricsToken},
		Console:  console.New(console.Config{Client: db.Client, Identity: ids, Log: log.With("component", "console")}),
		Usage: &usagegraph.Service{Client: db.Client, PrometheusURL: cfg.PrometheusURL, HTTP: g.egress.Client(30 * time.Second),
			Log: log.With("component", "usagegraph")},
	})
	// The Asynq web UI for platform admins; everything else is the API's.
	root := http.NewServeMux()
	root.Handle(worker.MonitorPath+"/", worker.MonitorWithSessions(redis.Asynq, ids.Middleware))
	root.Handle("/", handler)
	trusted, err := httpapi.ParseTrustedProxies(cfg.TrustedProxies)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	// Slow clients: headers, bodies (uploads by idle time) and idle connections are bounded;
	// the body deadline wraps everything, to reach the connection itself.
	srv := httpServer(cfg, httpapi.BodyDeadline(cfg.HTTPBodyTimeout, httpapi.RealIP(trusted, telemetry.HTTPHandler(tr, root))))
	var metricsSrv *http.Server
	var metricsLn net.Listener
	if cfg.MetricsAddr != "" {
		if metricsLn, err = net.Listen("tcp", cfg.MetricsAddr); err != nil {
			_ = ln.Close()
			return fmt.Errorf("listen on %s (--metrics-addr): %w", cfg.MetricsAddr, err)
		}
		metricsSrv = httpServer(cfg, httpapi.MetricsHandler(reg, cfg.MetricsToken))
	}
	pprofSrv, pprofLn, err := listenPprof(cfg)
	if err != nil {
		_ = ln.Close()
		if metricsLn != nil {
			_ = metricsLn.Close()
		}
		return err
	}

	// The serving tier: the API, and metrics and profiles on their own addresses if asked.
	p := process{log: log, serving: []Component{serveHTTP("http", srv, ln, cfg.ShutdownGrace)},
		background: []Component{relay(h)}}
	if metricsSrv != nil {
		p.serving = append(p.serving, serveHTTP("metrics", metricsSrv, metricsLn, cfg.ShutdownGrace))
		log.Info("metrics served on their own address", "metrics_addr", metricsLn.Addr().String())
	}
	if pprofSrv != nil {
		p.serving = append(p.serving, serveHTTP("pprof", pprofSrv, pprofLn, cfg.ShutdownGrace))
		log.Info("runtime profiles served on loopback", "pprof_addr", pprofLn.Addr().String())
	}
	// Embedded mode (no DATABASE_URL): this is the only process, so it is the worker too,
	// with the same components as cmd/worker. embeddedWorkers is its task concurrency: as
	// many tasks as the SQLite pool has connections (infra), so provisioning keeps up with the
	// API's creates (issue 30: with 4, a demo VM waited a median 50 s for its assignment).
	const embeddedWorkers = 8
	if cfg.Embedded() {
		p.background = append(p.background, workerRole{cfg: cfg, db: db, redis: redis, g: g, prov: prov, guests: guests,
			images: images, kube: kube, tr: tr, rec: rec, log: log, concurrency: embeddedWorkers, tasksLog: log.With("component", "worker")}.components()...)
	}
	addr := ln.Addr().String()
	showToken := func() {
		if oneTimeToken != "" {
			showAdminToken(os.Stderr, oneTimeToken, displayAddr(addr), cfg.LogFormat == "json", log)
		}
	}
	if cfg.Demo {
		p.background = append(p.background, demoFleet(db, ids, addr, log, showToken))
	}
	err = p.run(ctx, func() {
		log.Info("virtflow server ready", "addr", addr, "startup_ms", time.Since(start).Milliseconds(),
			"graphql", "/query", "playground", "/playground")
		if ready != nil {
			ready(addr)
		}
		if !cfg.Demo {
			showToken()
		}
	})
	if err != nil {
		log.Error("server failed", "err", err)
	}
	return err
}

// listenPprof listens on cfg.PprofAddr (config.Load accepts only loopback addresses) and
// returns a server of Go's runtime profiles (net/http/pprof's handlers under
// /debug/pprof/) for it; nil when the address is empty. The handlers are mounted on a mux of
// their own, never on the API's.
func listenPprof(cfg config.Config) (*http.Server, net.Listener, error) {
	if cfg.PprofAddr == "" {
		return nil, nil, nil
	}
	ln, err := net.Listen("tcp", cfg.PprofAddr)
	if err != nil {
		return nil, nil, fmt.Errorf("listen on %s (--pprof-addr): %w", cfg.PprofAddr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return &http.Server{Handler: mux, ReadHeaderTimeout: httpapi.DefaultReadHeaderTimeout}, ln, nil
}

// httpServer is an http.Server of h with the timeouts of cfg (zero ones take httpapi's
// defaults, for configurations built without config.Load).
func httpServer(cfg config.Config, h http.Handler) *http.Server {
	or := func(d, def time.Duration) time.Duration {
		if d <= 0 {
			return def
		}
		return d
	}
	return &http.Server{Handler: h,
		ReadHeaderTimeout: or(cfg.HTTPReadHeaderTimeout, httpapi.DefaultReadHeaderTimeout),
		IdleTimeout:       or(cfg.HTTPIdleTimeout, httpapi.DefaultIdleTimeout)}
}

// --- simulated fleet (--demo) ---

// demoFleet is the component that runs, with --demo, a simulated node agent for every
// compute node (package fleet) against this server's own HTTP address. A fleet that cannot
// start is logged, not fatal: the API works without it.
//
// The simulated agents and the tokens issued to them log at warning and above only: their
// start is one line, and started runs once the fleet is up.
func demoFleet(db *infra.Database, ids *identity.Service, addr string, log *slog.Logger, started func()) Component {
	addr = displayAddr(addr)
	quiet := slog.New(minLevel{Handler: log.Handler(), min: slog.LevelWarn}).With("component", "fleet")
	fleetIDs := *ids
	fleetIDs.Log = quiet
	return loop("demo-fleet", func(ctx context.Context) {
		err := fleet.RunDemoNotify(ctx, db.Client, &fleetIDs, "http://"+addr+"/query", quiet, func(nodes int) {
			log.Info("simulated fleet running: one agent per demo compute node, logging warnings only", "component", "fleet", "nodes", nodes)
			started()
		})
		if err != nil && ctx.Err() == nil {
			quiet.Error("simulated fleet stopped", "err", err)
			started()
		}
	})
}

// displayAddr is addr with an unspecified host (":8080", "0.0.0.0:8080") made 127.0.0.1.
func displayAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err == nil && (host == "" || net.ParseIP(host).IsUnspecified()) {
		return net.JoinHostPort("127.0.0.1", port)
	}
	return addr
}

// minLevel is a slog handler dropping records below min.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{Handler: h.Handler.WithAttrs(as), min: h.min}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{Handler: h.Handler.WithGroup(name), min: h.min}
}
