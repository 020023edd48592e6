package app

import (
	"context"
	"errors"
	"log/slog"

	"github.com/virtflow/virtflow/audit"
	"github.com/virtflow/virtflow/internal/config"
	"github.com/virtflow/virtflow/internal/infra"
	"github.com/virtflow/virtflow/worker"
)

// RunWorker runs a standalone worker process against the configured PostgreSQL and Redis
// until ctx ends. Any number of workers may run side by side.
func RunWorker(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	if cfg.Embedded() || cfg.RedisURL == "" {
		return errors.New("a standalone worker needs DATABASE_URL and REDIS_URL; without them `go run ./cmd/server` runs the worker in-process")
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
	go audit.RetentionLoop(ctx, db.Client, cfg.AuditRetention, log.With("component", "audit"))
	return worker.Run(ctx, redis.Asynq, 10, log)
}
