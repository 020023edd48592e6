// Package worker runs VirtFlow's asynchronous controllers on Asynq: the task handlers that
// carry out accepted requests (the VM tasks of package provision) and the reconcile loop
// that retries or fails VMs stuck in a transitional state. It is started by cmd/worker, or
// inside cmd/server in the embedded single-process mode. Tasks reach Redis through the
// transactional outbox (package outbox), whose relay the process wiring (internal/app)
// runs beside the worker. The same worker runs the event rules (package alerting, queue
// "alerting"), and turns provisioning tasks that failed for good into events for them.
// A task finished for good is acknowledged in the outbox
// (outbox.Acknowledge); until then the relays restore it if Redis loses it.
//
// Queues: "default" and one queue per region, "region:<region name>" (provision.Queue), so
// that a worker can be deployed per region. A worker given no queue list serves all of them,
// and picks up the queue of a region created while it runs within [Config.QueueRefresh].
package worker

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/hibiken/asynq"
	"go.opentelemetry.io/otel/trace"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/controllers/alerting"
	"github.com/virtflow/virtflow/controllers/imagestore"
	"github.com/virtflow/virtflow/controllers/outbox"
	"github.com/virtflow/virtflow/controllers/provision"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/internal/platform/secrets"
)

// Queues are the fixed queues a worker serving everything serves, with their priority;
// region queues get RegionPriority.
var Queues = map[string]int{"critical": 6, "default": 3, "low": 1, alerting.Queue: 3}

// RegionPriority is the priority of every region's queue.
const RegionPriority = 3

// TaskCheckInterval is how often an idle worker asks Redis for new tasks.
const TaskCheckInterval = 100 * time.Millisecond

// Config is what a worker runs with.
type Config struct {
	// Redis is where the tasks are.
	Redis asynq.RedisConnOpt
	// Client and Dialect are the database the handlers work on.
	Client  *ent.Client
	Dialect string
	// Concurrency is how many tasks run at once (10).
	Concurrency int
	// Queues lists the queues to serve; empty serves "default" and every region's queue.
	Queues []string
	// QueueRefresh is how often a worker serving every queue looks for new regions (30 s).
	QueueRefresh time.Duration
	// RetryDelay overrides the backoff between attempts (provision.RetryDelay, and
	// imagestore.RetryDelay for image fetches).
	RetryDelay func(n int, err error, t *asynq.Task) time.Duration
	// RetryCheck is how often retried and scheduled tasks are moved back to their queue
	// (Asynq's DelayedTaskCheckInterval, 5 s by default); tests shorten it.
	RetryCheck time.Duration
	// Reconcile tunes the stuck-VM reconcile loop.
	Reconcile provision.ReconcileConfig
	// Fault is provision.Handlers.Fault: fault injection for tests; nil in production.
	Fault func(kind string, vm int) error
	// Clock is the handlers' and the reconcile loop's clock (provision.Service.Clock);
	// nil means time.Now.
	Clock func() time.Time
	// Images, when set, runs the image fetch tasks (imagestore.TypeFetch).
	Images *imagestore.Store
	// Log receives the worker's logs.
	Log *slog.Logger
	// HookClient delivers the event rules' hooks (alerting.Engine.HTTP); nil uses
	// alerting.HookClient of the default egress policy.
	HookClient *http.Client
	// Secrets opens the sealed hook secrets (alerting.Engine.Secrets).
	Secrets *secrets.Keyring
	// Kubernetes, when set, serves the Kubernetes clusters' workflow (kubecluster.Service).
	Kubernetes interface{ Register(*asynq.ServeMux) }
	// Tracer makes a span of every task that carries a trace context (nil: none).
	Tracer trace.TracerProvider
}

// ParseQueues reads a queue list such as "region:eu-west,default" (VIRTFLOW_WORKER_QUEUES,
// --queues): comma-separated queue names, where a bare name other than critical, default
// and low is a region's name. Empty means every queue.
func ParseQueues(s string) []string {
	var out []string
	for _, q := range strings.Split(s, ",") {
		q = strings.TrimSpace(q)
		switch {
		case q == "":
			continue
		case strings.Contains(q, ":"):
		case Queues[q] != 0:
		default:
			q = provision.Queue(q)
		}
		if !slices.Contains(out, q) {
			out = append(out, q)
		}
	}
	return out
}

// Run serves tasks until ctx is done, then shuts down gracefully, letting running tasks
// finish (Asynq re-queues those that do not). The reconcile loop runs beside it.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 10
	}
	if cfg.QueueRefresh <= 0 {
		cfg.QueueRefresh = 30 * time.Second
	}
	if cfg.RetryDelay == nil {
		cfg.RetryDelay = func(n int, err error, t *asynq.Task) time.Duration {
			if t.Type() == imagestore.TypeFetch {
				return imagestore.RetryDelay(n)
			}
			return provision.RetryDelay(n, err, t)
		}
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	rec := &provision.Reconciler{Client: cfg.Client, Config: cfg.Reconcile, Clock: cfg.Clock,
		Log: cfg.Log.With("component", "reconcile")}
	done := make(chan struct{})
	go func() { defer close(done); rec.Run(ctx) }()
	defer func() { <-done }()
	backups := &provision.BackupScheduler{Client: cfg.Client, Service: provision.New(provision.Config{Clock: cfg.Clock}),
		Log: cfg.Log.With("component", "backup-schedule")}
	scheduled := make(chan struct{})
	go func() { defer close(scheduled); backups.Run(ctx) }()
	defer func() { <-scheduled }()

	h := &provision.Handlers{Client: cfg.Client, Log: cfg.Log, Fault: cfg.Fault, Clock: cfg.Clock}
	rules := &alerting.Engine{Client: cfg.Client, HTTP: cfg.HookClient, Secrets: cfg.Secrets, Clock: cfg.Clock, Log: cfg.Log.With("component", "alerting")}
	taskFailed := alerting.TaskFailed(cfg.Client)
	failed := func(ctx context.Context, t *asynq.Task, err error) {
		h.Failed(ctx, t, err)
		if slices.Contains(provision.Kinds, t.Type()) {
			taskFailed(ctx, t, err) // a provisioning task failed for good: an event for the rules
		}
	}
	for {
		queues, err := cfg.queues(ctx)
		if err != nil {
			return err
		}
		srv := asynq.NewServer(cfg.Redis, asynq.Config{
			Concurrency:              cfg.Concurrency,
			Queues:                   queues,
			Logger:                   asynqLogger{cfg.Log},
			ErrorHandler:             asynq.ErrorHandlerFunc(failed),
			RetryDelayFunc:           cfg.RetryDelay,
			IsFailure:                provision.IsFailure,
			DelayedTaskCheckInterval: cfg.RetryCheck,
			// An idle worker looks for tasks every 100 ms, not every second (Asynq's
			// default): an event's way to its hook crosses two tasks, and the issue asks
			// for p99 under a second (alerting.BenchmarkEventToHook).
			TaskCheckInterval: TaskCheckInterval,
		})
		mux := asynq.NewServeMux()
		if cfg.Tracer != nil {
			mux.Use(traced(cfg.Tracer))
		}
		mux.Use(outbox.Acknowledge(cfg.Client, cfg.Log))
		h.Register(mux)
		rules.Register(mux)
		if cfg.Kubernetes != nil {
			cfg.Kubernetes.Register(mux)
		}
		if cfg.Images != nil {
			cfg.Images.Register(mux)
		}
		if err := srv.Start(mux); err != nil {
			return fmt.Errorf("start asynq server: %w", err)
		}
		cfg.Log.Info("worker started", "concurrency", cfg.Concurrency, "queues", slices.Sorted(maps.Keys(queues)),
			"task_types", provision.Kinds)
		changed := cfg.waitForNewQueues(ctx, queues)
		srv.Shutdown()
		if !changed {
			cfg.Log.Info("worker stopped")
			return nil
		}
		cfg.Log.Info("new region queues: restarting the worker")
	}
}

// queues returns the queues to serve with their priorities.
func (cfg Config) queues(ctx context.Context) (map[string]int, error) {
	out := map[string]int{}
	if len(cfg.Queues) > 0 {
		for _, q := range cfg.Queues {
			out[q] = max(Queues[q], RegionPriority)
		}
		return out, nil
	}
	maps.Copy(out, Queues)
	names, err := cfg.Client.Region.Query().Select("name").Strings(authz.SystemContext(ctx, "worker"))
	if err != nil {
		return nil, fmt.Errorf("list regions for their queues: %w", err)
	}
	for _, n := range names {
		out[provision.Queue(n)] = RegionPriority
	}
	return out, nil
}

// waitForNewQueues waits until ctx is done (false) or, for a worker serving every queue,
// until a region appears whose queue it does not serve (true).
func (cfg Config) waitForNewQueues(ctx context.Context, serving map[string]int) bool {
	t := time.NewTicker(cfg.QueueRefresh)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
		if len(cfg.Queues) > 0 {
			continue
		}
		now, err := cfg.queues(ctx)
		if err != nil {
			cfg.Log.Warn("look for new region queues", "err", err)
			continue
		}
		for q := range now {
			if _, ok := serving[q]; !ok {
				return true
			}
		}
	}
}

// asynqLogger routes Asynq's own logs into slog.
type asynqLogger struct{ l *slog.Logger }

func (a asynqLogger) Debug(args ...any) { a.l.Debug(fmt.Sprint(args...), "component", "asynq") }
func (a asynqLogger) Info(args ...any)  { a.l.Info(fmt.Sprint(args...), "component", "asynq") }
func (a asynqLogger) Warn(args ...any)  { a.l.Warn(fmt.Sprint(args...), "component", "asynq") }
func (a asynqLogger) Error(args ...any) { a.l.Error(fmt.Sprint(args...), "component", "asynq") }
func (a asynqLogger) Fatal(args ...any) {
	a.l.Error(fmt.Sprint(args...), "component", "asynq", "fatal", true)
}
