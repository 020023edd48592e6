package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/virtflow/virtflow/controllers/alerting"
	"github.com/virtflow/virtflow/controllers/gslb"
	"github.com/virtflow/virtflow/controllers/imagestore"
	"github.com/virtflow/virtflow/controllers/kubecluster"
	"github.com/virtflow/virtflow/controllers/metrics"
	"github.com/virtflow/virtflow/controllers/nodemonitor"
	"github.com/virtflow/virtflow/controllers/provision"
	"github.com/virtflow/virtflow/controllers/traffic"
	"github.com/virtflow/virtflow/controllers/worker"
	"github.com/virtflow/virtflow/domain/audit"
	"github.com/virtflow/virtflow/domain/egress"
	"github.com/virtflow/virtflow/domain/guest"
	"github.com/virtflow/virtflow/domain/metering"
	"github.com/virtflow/virtflow/gateway/httpapi"
	"github.com/virtflow/virtflow/internal/platform/config"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/platform/telemetry"
	"github.com/virtflow/virtflow/internal/platform/version"
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
//
// A standalone worker is the operations endpoint (serving tier), the outbox relay and the
// worker role's components (workerRole.components), the same list the server runs in its
// embedded mode.
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
	g, err := openGuards(cfg, log)
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
	h := installHooks(db, redis, g, tr, log) // before anything uses the client
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
	images, err := imageStore(cfg, db, g, log)
	if err != nil {
		return err
	}
	role := workerRole{cfg: cfg, db: db, redis: redis, g: g, prov: prov, guests: guests, images: images,
		kube: kubeClusters(db, prov, g, log), tr: tr, rec: rec, log: log,
		queues: worker.ParseQueues(os.Getenv(EnvWorkerQueues)), tasksLog: log}
	// Operations surface: health, readiness, metrics and version on --addr.
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	srv := httpServer(cfg, httpapi.Ops(httpapi.OpsDeps{Logger: log, Registry: reg, MetricsToken: cfg.MetricsToken,
		Checks: map[string]httpapi.Checker{"database": db, "redis": redis}}))
	p := process{log: log,
		serving:    []Component{serveHTTP("http", srv, ln, 5*time.Second)},
		background: append([]Component{relay(h)}, role.components()...)}
	return p.run(ctx, func() {
		log.Info("worker serving /metrics, /healthz and /readyz", "addr", ln.Addr().String())
		if o.Ready != nil {
			o.Ready(ln.Addr().String())
		}
	})
}

// workerRole is the worker role of a process: the asynchronous controllers, in a standalone
// worker (cmd/worker) and in the server's embedded mode alike. Only the task handlers'
// concurrency, queues and logger differ between the two.
type workerRole struct {
	cfg    config.Config
	db     *infra.Database
	redis  *infra.Redis
	g      guards
	prov   *provision.Service
	guests *guest.Service
	images *imagestore.Store
	kube   *kubecluster.Service
	tr     *telemetry.Tracing
	rec    provision.ReconcileConfig
	log    *slog.Logger
	// concurrency and queues are the task handlers' (worker.Config; zero values take its
	// defaults); tasksLog is their logger.
	concurrency int
	queues      []string
	tasksLog    *slog.Logger
}

// components are the worker role's components. Any number of processes may run them side
// by side: the node monitor runs in the one holding its lease, every other loop's writes are
// conditional or the same decision from the same rows.
func (w workerRole) components() []Component {
	db, log := w.db, w.log
	return []Component{
		loop("audit-retention", func(ctx context.Context) {
			audit.RetentionLoop(ctx, db.Client, w.cfg.AuditRetention, log.With("component", "audit"))
		}),
		// The node monitor runs in the one process holding its lease; the status changes it
		// makes reach subscribers on every server (the live status hook, installHooks).
		loop("nodemonitor", func(ctx context.Context) {
			nodemonitor.Run(ctx, db.Client, w.redis.Client, nodeMonitor(w.cfg, w.prov, w.redis), log.With("component", "nodemonitor"))
		}),
		// The guests' deadline: each overdue guest is marked (and warned about) once, by
		// whichever process's conditional update wins.
		loop("guest-deadline", func(ctx context.Context) { w.guests.Run(ctx, log.With("component", "guest")) }),
		// Invoices: a month's become FINAL once it closed and its grace period passed,
		// whether or not anyone reads them (the database keeps one per tenant and month).
		loop("invoice-finalizer", func(ctx context.Context) {
			metering.FinalizeLoop(ctx, db.Client, w.prov.Clock(), metering.DefaultGrace, 10*time.Minute, log.With("component", "metering"))
		}),
		// Load balancers and global services: nodes chosen, members listed, status from the
		// nodes' reports, GSLB answers pushed to PowerDNS (package traffic).
		loop("traffic", func(ctx context.Context) {
			l := &traffic.Loop{Client: db.Client, Config: trafficConfig(w.cfg, w.prov.Clock(), w.g.egress), Log: log.With("component", "traffic")}
			l.Run(ctx, 2*time.Second)
		}),
		// The Asynq task handlers and the reconcile loop (package worker).
		{Name: "tasks", Run: func(ctx context.Context) error {
			return worker.Run(ctx, worker.Config{Redis: w.redis.Asynq, Client: db.Client, Dialect: db.Dialect,
				Concurrency: w.concurrency, Queues: w.queues, Clock: w.prov.Clock(), Reconcile: w.rec, Images: w.images,
				Log: w.tasksLog, Tracer: w.tr.Provider, HookClient: alerting.HookClient(w.g.egress), Secrets: w.g.secrets,
				Kubernetes: w.kube})
		}},
	}
}

// kubeClusters is the process's Kubernetes cluster service.
func kubeClusters(db *infra.Database, prov *provision.Service, g guards, log *slog.Logger) *kubecluster.Service {
	return kubecluster.New(kubecluster.Config{Client: db.Client, Provision: prov, Secrets: g.secrets, Log: log.With("component", "kubernetes")})
}

// relay is the component of the outbox relay installHooks made: every server and worker
// runs one (any number may run against one database).
func relay(h hooked) Component {
	return loop("outbox-relay", h.relay.Run)
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
