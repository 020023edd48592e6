package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/virtflow/virtflow/audit"
	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/demo"
	"github.com/virtflow/virtflow/fleet"
	"github.com/virtflow/virtflow/graph"
	"github.com/virtflow/virtflow/identity"
	"github.com/virtflow/virtflow/internal/config"
	"github.com/virtflow/virtflow/internal/httpapi"
	"github.com/virtflow/virtflow/internal/infra"
	"github.com/virtflow/virtflow/livestatus"
	"github.com/virtflow/virtflow/nodemonitor"
	"github.com/virtflow/virtflow/worker"
)

// RunServer runs the API server described by cfg until ctx ends. In embedded mode (no
// DATABASE_URL) it also runs the worker in the same process. ready, if not nil, receives the
// listening address once requests are served.
func RunServer(ctx context.Context, cfg config.Config, log *slog.Logger, ready func(addr string)) error {
	start := time.Now()
	prov := provisioning(cfg)
	db, err := infra.OpenDatabase(ctx, cfg.DatabaseURL, cfg.DataDir)
	if err != nil {
		return err
	}
	defer db.Close()
	log.Info("database ready", "dialect", db.Dialect, "embedded", cfg.Embedded(), "data_dir", cfg.DataDir)

	redis, err := infra.OpenRedis(ctx, cfg.RedisURL)
	if err != nil {
		return err
	}
	defer redis.Close()
	log.Info("redis ready", "embedded", redis.Embedded())

	// Live status: publish status changes once committed; serve them to subscriptions.
	livestatus.Install(db.Client, redis.Client, log.With("component", "livestatus"))
	// Every server relays the outbox (safe with any number of relays); made here, before the
	// client is in use, because it hooks the client to be woken by commits.
	rl := relay(db, redis, log)
	hub := livestatus.NewHub(redis.Client, log.With("component", "livestatus"))
	if err := hub.Start(ctx); err != nil {
		return err
	}

	ids := &identity.Service{Client: db.Client, Redis: redis.Client, Log: log.With("component", "identity")}
	if err := bootstrapAdmin(ctx, ids, db.Client, cfg.AdminToken, log); err != nil {
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

	opts := graph.DefaultOptions()
	opts.Provision = prov
	opts.Introspection = cfg.Introspection
	opts.Live = hub
	handler := httpapi.New(httpapi.Deps{
		Client:   db.Client,
		Logger:   log,
		GraphQL:  opts,
		Checks:   map[string]httpapi.Checker{"database": db, "redis": redis},
		Identity: ids,
	})
	// The Asynq web UI for platform admins; everything else is the API's.
	root := http.NewServeMux()
	root.Handle(worker.MonitorPath+"/", worker.Monitor(redis.Asynq, ids.Middleware))
	root.Handle("/", handler)
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	srv := &http.Server{Handler: root, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errc := make(chan error, 2)
	wg.Add(1)
	go func() {
		defer wg.Done()
		rl.Run(ctx)
	}()
	if cfg.Embedded() {
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
			wcfg := worker.Config{Redis: redis.Asynq, Client: db.Client, Dialect: db.Dialect, Concurrency: 4, Clock: prov.Clock(),
				Reconcile: rec, Log: log.With("component", "worker")}
			if err := worker.Run(ctx, wcfg); err != nil {
				errc <- err
			}
		}()
		// The node monitor runs in whichever process holds its lease: here, the only one.
		wg.Add(1)
		go func() {
			defer wg.Done()
			nodemonitor.Run(ctx, db.Client, redis.Client, nodeMonitor(cfg, prov), log.With("component", "nodemonitor"))
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("serve http: %w", err)
		}
	}()
	addr := ln.Addr().String()
	log.Info("virtflow server ready", "addr", addr, "startup_ms", time.Since(start).Milliseconds(),
		"graphql", "/query", "playground", "/playground")
	if ready != nil {
		ready(addr)
	}
	if cfg.Demo {
		startDemoFleet(ctx, &wg, db, ids, addr, log)
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
	cancel()
	wg.Wait()
	return err
}

// --- simulated fleet (--demo) ---

// startDemoFleet runs, with --demo, a simulated node agent for every compute node (package
// fleet) against this server's own HTTP address, until ctx ends. A fleet that cannot start
// is logged, not fatal: the API works without it.
func startDemoFleet(ctx context.Context, wg *sync.WaitGroup, db *infra.Database, ids *identity.Service, addr string, log *slog.Logger) {
	host, port, err := net.SplitHostPort(addr)
	if err == nil && (host == "" || net.ParseIP(host).IsUnspecified()) {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		l := log.With("component", "fleet")
		if err := fleet.RunDemo(ctx, db.Client, ids, "http://"+addr+"/query", l); err != nil && ctx.Err() == nil {
			l.Error("simulated fleet stopped", "err", err)
		}
	}()
}
