package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"sync"
	"time"

	"github.com/virtflow/virtflow/alerting"
	"github.com/virtflow/virtflow/audit"
	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/console"
	"github.com/virtflow/virtflow/demo"
	"github.com/virtflow/virtflow/fleet"
	"github.com/virtflow/virtflow/graph"
	"github.com/virtflow/virtflow/identity"
	"github.com/virtflow/virtflow/internal/config"
	"github.com/virtflow/virtflow/internal/httpapi"
	"github.com/virtflow/virtflow/internal/infra"
	"github.com/virtflow/virtflow/internal/telemetry"
	"github.com/virtflow/virtflow/internal/version"
	"github.com/virtflow/virtflow/kubecluster"
	"github.com/virtflow/virtflow/livestatus"
	"github.com/virtflow/virtflow/metrics"
	"github.com/virtflow/virtflow/nodemonitor"
	"github.com/virtflow/virtflow/usagegraph"
	"github.com/virtflow/virtflow/worker"
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

	// Live status: publish status changes once committed; serve them to subscriptions.
	installLiveStatus(db, redis, log)
	snaps := snapshots(db, redis, log)
	// The egress policy's and the sealed secrets' write rules hook the client too.
	g, err := openGuards(ctx, cfg, db, log)
	if err != nil {
		return err
	}
	// Every server relays the outbox (safe with any number of relays); made here, before the
	// client is in use, because it hooks the client to be woken by commits.
	rl := relay(db, redis, tr, log)
	// Every hook is in: from here on goroutines may use the client.
	if err := startSnapshots(ctx, snaps); err != nil {
		return err
	}
	reg := registry(db, redis, log)
	guests := guestService(cfg, db, redis)
	prov := provisioning(cfg, snaps, metrics.NewPlacement(reg).Observe, guests)
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
	kube := kubecluster.New(kubecluster.Config{Client: db.Client, Provision: prov, Secrets: g.secrets, Log: log.With("component", "kubernetes")})
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

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errc := make(chan error, 3)
	wg.Add(1)
	go func() {
		defer wg.Done()
		rl.Run(ctx)
	}()
	if cfg.Embedded() {
		// embeddedWorkers is the embedded worker's concurrency: as many tasks as the SQLite
		// pool has connections (infra), so provisioning keeps up with the API's creates
		// (issue 30: with 4, a demo VM waited a median 50 s for its node's assignment).
		const embeddedWorkers = 8
		wg.Add(2)
		go func() {
			defer wg.Done()
			audit.RetentionLoop(ctx, db.Client, cfg.AuditRetention, log.With("component", "audit"))
		}()
		go func() {
			defer wg.Done()
			rec, err := reconcileConfig()
			if err != nil {
				errc <- err
				return
			}
			wcfg := worker.Config{Redis: redis.Asynq, Client: db.Client, Dialect: db.Dialect, Concurrency: embeddedWorkers, Clock: prov.Clock(),
				Reconcile: rec, Images: images, Log: log.With("component", "worker"), Tracer: tr.Provider,
				HookClient: alerting.HookClient(g.egress), Secrets: g.secrets, Kubernetes: kube}
			if err := worker.Run(ctx, wcfg); err != nil {
				errc <- err
			}
		}()
		// The guests' deadline is watched here too: this is the only process.
		wg.Add(1)
		go func() { defer wg.Done(); guests.Run(ctx, log.With("component", "guest")) }()
		// The node monitor runs in whichever process holds its lease: here, the only one.
		wg.Add(1)
		go func() {
			defer wg.Done()
			nodemonitor.Run(ctx, db.Client, redis.Client, nodeMonitor(cfg, prov, redis), log.With("component", "nodemonitor"))
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("serve http: %w", err)
		}
	}()
	if metricsSrv != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := metricsSrv.Serve(metricsLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("serve metrics: %w", err)
			}
		}()
		log.Info("metrics served on their own address", "metrics_addr", metricsLn.Addr().String())
	}
	if pprofSrv != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := pprofSrv.Serve(pprofLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("serve pprof: %w", err)
			}
		}()
		log.Info("runtime profiles served on loopback", "pprof_addr", pprofLn.Addr().String())
	}
	addr := ln.Addr().String()
	log.Info("virtflow server ready", "addr", addr, "startup_ms", time.Since(start).Milliseconds(),
		"graphql", "/query", "playground", "/playground")
	if ready != nil {
		ready(addr)
	}
	showToken := func() {
		if oneTimeToken != "" {
			showAdminToken(os.Stderr, oneTimeToken, displayAddr(addr), cfg.LogFormat == "json", log)
		}
	}
	if cfg.Demo {
		startDemoFleet(ctx, &wg, db, ids, addr, log, showToken)
	} else {
		showToken()
	}

	select {
	case <-ctx.Done():
	case err = <-errc:
		log.Error("server failed", "err", err)
	}
	log.Info("shutting down", "grace", cfg.ShutdownGrace)
	shutdownCtx, done := context.WithTimeout(context.Background(), cfg.ShutdownGrace)
	defer done()
	if serr := srv.Shutdown(shutdownCtx); serr != nil {
		log.Warn("http shutdown", "err", serr)
	}
	if metricsSrv != nil {
		_ = metricsSrv.Shutdown(shutdownCtx)
	}
	if pprofSrv != nil {
		_ = pprofSrv.Shutdown(shutdownCtx)
	}
	cancel()
	wg.Wait()
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

// startDemoFleet runs, with --demo, a simulated node agent for every compute node (package
// fleet) against this server's own HTTP address, until ctx ends. A fleet that cannot start
// is logged, not fatal: the API works without it.
//
// The simulated agents and the tokens issued to them log at warning and above only: their
// start is one line, and started runs once the fleet is up.
func startDemoFleet(ctx context.Context, wg *sync.WaitGroup, db *infra.Database, ids *identity.Service, addr string, log *slog.Logger, started func()) {
	addr = displayAddr(addr)
	quiet := slog.New(minLevel{Handler: log.Handler(), min: slog.LevelWarn}).With("component", "fleet")
	fleetIDs := *ids
	fleetIDs.Log = quiet
	wg.Add(1)
	go func() {
		defer wg.Done()
		err := fleet.RunDemoNotify(ctx, db.Client, &fleetIDs, "http://"+addr+"/query", quiet, func(nodes int) {
			log.Info("simulated fleet running: one agent per demo compute node, logging warnings only", "component", "fleet", "nodes", nodes)
			started()
		})
		if err != nil && ctx.Err() == nil {
			quiet.Error("simulated fleet stopped", "err", err)
			started()
		}
	}()
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
