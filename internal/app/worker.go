package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/virtflow/virtflow/alerting"
	"github.com/virtflow/virtflow/audit"
	"github.com/virtflow/virtflow/egress"
	"github.com/virtflow/virtflow/gslb"
	"github.com/virtflow/virtflow/imagestore"
	"github.com/virtflow/virtflow/internal/config"
	"github.com/virtflow/virtflow/internal/httpapi"
	"github.com/virtflow/virtflow/internal/infra"
	"github.com/virtflow/virtflow/internal/telemetry"
	"github.com/virtflow/virtflow/internal/version"
	"github.com/virtflow/virtflow/kubecluster"
	"github.com/virtflow/virtflow/metering"
	"github.com/virtflow/virtflow/metrics"
	"github.com/virtflow/virtflow/nodemonitor"
	"github.com/virtflow/virtflow/outbox"
	"github.com/virtflow/virtflow/provision"
	"github.com/virtflow/virtflow/traffic"
	"github.com/virtflow/virtflow/worker"
)

// EnvReconcileDeadline is how long a VM may stay in a transitional state before the
// reconcile loop retries or fails it, e.g. "10m" (the default).
const EnvReconcileDeadline = "VIRTFLOW_RECONCILE_DEADLINE"

// reconcileConfig reads the reconcile loop's settings from the environment.
func reconcileConfig() (provision.ReconcileConfig, error) {
	var c provision.ReconcileConfig
	if v := os.Getenv(EnvReconcileDeadline); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return c, fmt.Errorf("%s=%q: want a positive duration such as 10m", EnvReconcileDeadline, v)
		}
		c.Deadline = d
	}
	return c, nil
}

// EnvWorkerQueues lists the queues a standalone worker serves, e.g. "region:eu-west,default"
// (worker.ParseQueues); unset, it serves every queue.
const EnvWorkerQueues = "VIRTFLOW_WORKER_QUEUES"

// RunWorker runs a standalone worker process against the configured PostgreSQL and Redis
// until ctx ends: the task handlers, the reconcile loop and an outbox relay. Any number of
// workers may run side by side; VIRTFLOW_WORKER_QUEUES limits one to some regions' queues,
// VIRTFLOW_RECONCILE_DEADLINE sets how long a VM may stay in a transitional state.
func RunWorker(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	tr, err := telemetry.FromEnv(ctx, "virtflow-worker", version.Get().Version)
	if err != nil {
		return err
	}
	defer flushTraces(tr, log)
	return RunWorkerWith(ctx, cfg, log, Options{Tracing: tr})
}

// RunWorkerWith is RunWorker with the tracing given; Options.Ready receives the address of
// its operations endpoint.
func RunWorkerWith(ctx context.Context, cfg config.Config, log *slog.Logger, o Options) error {
	tr := o.Tracing
	if tr == nil {
		tr = telemetry.Off()
	}
	if cfg.Embedded() || cfg.RedisURL == "" {
		return errors.New("a standalone worker needs DATABASE_URL and REDIS_URL; without them `go run ./cmd/server` runs the worker in-process")
	}
	rec, err := reconcileConfig()
	if err != nil {
		return err
	}
	db, err := infra.OpenDatabaseWith(ctx, cfg.DatabaseURL, cfg.DataDir, infra.OpenOptions{Log: log, Tracing: tr,
		MaxConns: cfg.DBMaxConns, NoStatementCache: !cfg.DBStatementCache})
	if err != nil {
		return err
	}
	defer db.Close()
	redis, err := openRedis(ctx, cfg)
	if err != nil {
		return err
	}
	defer redis.Close()
	// Hooks first, before any goroutine uses the client (ent's Use is not safe alongside
	// it): live status, the outbox relay's wake-up, the placement cache and the guards.
	installLiveStatus(db, redis, log)
	rl := relay(db, redis, tr, log)
	snaps := snapshots(db, redis, log)
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, err := openGuards(ctx, cfg, db, log)
	if err != nil {
		return err
	}
	if err := startSnapshots(ctx, snaps); err != nil {
		return err
	}
	// Operations surface: health, readiness, metrics and version on --addr.
	reg := registry(db, redis, log)
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	srv := httpServer(cfg, httpapi.Ops(httpapi.OpsDeps{Logger: log, Registry: reg, MetricsToken: cfg.MetricsToken,
		Checks: map[string]httpapi.Checker{"database": db, "redis": redis}}))
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("worker http", "err", err)
		}
	}()
	defer func() {
		sctx, done := context.WithTimeout(context.Background(), 5*time.Second)
		defer done()
		_ = srv.Shutdown(sctx)
	}()
	log.Info("worker serving /metrics, /healthz and /readyz", "addr", ln.Addr().String())
	if o.Ready != nil {
		o.Ready(ln.Addr().String())
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		audit.RetentionLoop(ctx, db.Client, cfg.AuditRetention, log.With("component", "audit"))
	}()
	go func() { defer wg.Done(); rl.Run(ctx) }()
	// The node monitor runs in the one worker holding its lease.
	guests := guestService(cfg, db, redis)
	prov := provisioning(cfg, snaps, metrics.NewPlacement(reg).Observe, guests)
	wg.Add(2)
	go func() {
		defer wg.Done()
		nodemonitor.Run(ctx, db.Client, redis.Client, nodeMonitor(cfg, prov, redis), log.With("component", "nodemonitor"))
	}()
	// Every worker watches the guests' deadline: each overdue guest is marked (and warned
	// about) once, by whichever worker's conditional update wins.
	go func() { defer wg.Done(); guests.Run(ctx, log.With("component", "guest")) }()
	// Invoices: a month's become FINAL once it closed and its grace period passed, whether or
	// not anyone reads them; every worker may try (the database keeps one per tenant and month).
	wg.Add(1)
	go func() {
		defer wg.Done()
		metering.FinalizeLoop(ctx, db.Client, prov.Clock(), metering.DefaultGrace, 10*time.Minute, log.With("component", "metering"))
	}()
	// Load balancers and global services: nodes chosen, members listed, status from the
	// nodes' reports, GSLB answers pushed to PowerDNS (package traffic); every worker may run
	// it (each write is the same decision from the same rows).
	wg.Add(1)
	go func() {
		defer wg.Done()
		loop := &traffic.Loop{Client: db.Client, Config: trafficConfig(cfg, prov.Clock(), g.egress), Log: log.With("component", "traffic")}
		loop.Run(ctx, 2*time.Second)
	}()
	images, err := imageStore(cfg, db, g, log)
	if err != nil {
		return err
	}
	kube := kubecluster.New(kubecluster.Config{Client: db.Client, Provision: prov, Secrets: g.secrets, Log: log.With("component", "kubernetes")})
	return worker.Run(ctx, worker.Config{Redis: redis.Asynq, Client: db.Client, Dialect: db.Dialect, Clock: prov.Clock(),
		Queues: worker.ParseQueues(os.Getenv(EnvWorkerQueues)), Reconcile: rec, Images: images, Log: log, Tracer: tr.Provider,
		HookClient: alerting.HookClient(g.egress), Secrets: g.secrets, Kubernetes: kube})
}

// trafficConfig is the traffic loop's configuration: GSLB through PowerDNS when cfg names
// it (VIRTFLOW_GSLB_*). PowerDNS's API and the members' VIP checks go through the process's
// egress policy: a PowerDNS or VIPs on private addresses must be named in
// VIRTFLOW_EGRESS_ALLOW.
func trafficConfig(cfg config.Config, clock func() time.Time, out *egress.Policy) traffic.Config {
	tc := traffic.Config{Clock: clock}
	if cfg.GSLBPowerDNSURL != "" && cfg.GSLBZone != "" {
		tc.Publisher = &gslb.Publisher{DNS: &gslb.PowerDNS{BaseURL: cfg.GSLBPowerDNSURL, APIKey: cfg.GSLBPowerDNSKey,
			Client: out.Client(5 * time.Second)}, Checker: gslb.Checker{Dial: out.DialContext},
			Zone: cfg.GSLBZone, NameServer: "ns1." + cfg.GSLBZone}
	}
	return tc
}

// relay is the outbox relay of a process: from its database to its Redis, with the
// provisioning tasks' retry and timeout options, woken by the commits of db.Client.
func relay(db *infra.Database, redis *infra.Redis, tr *telemetry.Tracing, log *slog.Logger) *outbox.Relay {
	return outbox.NewRelay(db.Client, redis.Asynq, outbox.Config{Dialect: db.Dialect, Options: taskOptions,
		Logger: log.With("component", "outbox"), Tracer: tr.Provider})
}

// flushTraces exports the spans still buffered when a process stops.
func flushTraces(tr *telemetry.Tracing, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tr.Shutdown(ctx); err != nil {
		log.Warn("flush traces", "err", err)
	}
}

// taskOptions are the Asynq options of every task kind the outbox relays.
func taskOptions(kind string) []asynq.Option {
	if o := imagestore.TaskOptions(kind); o != nil {
		return o
	}
	if kind == kubecluster.TypeStep {
		return kubecluster.TaskOptions()
	}
	return provision.TaskOptions(kind)
}

// registry is a process's Prometheus registry: Go runtime, process and the domain metrics.
func registry(db *infra.Database, redis *infra.Redis, log *slog.Logger) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		// go_sql_*{db_name="virtflow"}: the pool's size, use and waits (saturation).
		collectors.NewDBStatsCollector(db.DB, "virtflow"),
		metrics.New(db.Client, redis.Asynq, log.With("component", "metrics")))
	return reg
}
