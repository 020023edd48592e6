package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/virtflow/virtflow/audit"
	"github.com/virtflow/virtflow/internal/config"
	"github.com/virtflow/virtflow/internal/infra"
	"github.com/virtflow/virtflow/livestatus"
	"github.com/virtflow/virtflow/nodemonitor"
	"github.com/virtflow/virtflow/outbox"
	"github.com/virtflow/virtflow/provision"
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
	if cfg.Embedded() || cfg.RedisURL == "" {
		return errors.New("a standalone worker needs DATABASE_URL and REDIS_URL; without them `go run ./cmd/server` runs the worker in-process")
	}
	rec, err := reconcileConfig()
	if err != nil {
		return err
	}
	db, err := infra.OpenDatabase(ctx, cfg.DatabaseURL, cfg.DataDir)
	if err != nil {
		return err
	}
	defer db.Close()
	redis, err := infra.OpenRedis(ctx, cfg.RedisURL)
	if err != nil {
		return err
	}
	defer redis.Close()
	rl := relay(db, redis, log) // before the client is in use: it hooks the client
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wg.Add(2)
	go func() {
		defer wg.Done()
		audit.RetentionLoop(ctx, db.Client, cfg.AuditRetention, log.With("component", "audit"))
	}()
	go func() { defer wg.Done(); rl.Run(ctx) }()
	// Live status and the node monitor: status changes made here reach subscribers on every
	// server; the monitor runs in the one worker holding its lease.
	livestatus.Install(db.Client, redis.Client, log.With("component", "livestatus"))
	wg.Add(1)
	prov := provisioning(cfg)
	go func() {
		defer wg.Done()
		nodemonitor.Run(ctx, db.Client, redis.Client, nodeMonitor(cfg, prov), log.With("component", "nodemonitor"))
	}()
	return worker.Run(ctx, worker.Config{Redis: redis.Asynq, Client: db.Client, Dialect: db.Dialect, Clock: prov.Clock(),
		Queues: worker.ParseQueues(os.Getenv(EnvWorkerQueues)), Reconcile: rec, Log: log})
}

// relay is the outbox relay of a process: from its database to its Redis, with the
// provisioning tasks' retry and timeout options, woken by the commits of db.Client.
func relay(db *infra.Database, redis *infra.Redis, log *slog.Logger) *outbox.Relay {
	return outbox.NewRelay(db.Client, redis.Asynq, outbox.Config{Dialect: db.Dialect, Options: provision.TaskOptions,
		Logger: log.With("component", "outbox")})
}
