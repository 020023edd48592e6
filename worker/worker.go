// Package worker runs VirtFlow's asynchronous controllers on Asynq: the task handlers that
// carry out accepted requests (VM create/start/stop/reboot/delete, region-service reconcile,
// node drain), reconcile loops and the node monitor. It is started by cmd/worker, or inside
// cmd/server in the embedded single-process mode.
//
// Today it runs the Asynq server on the configured queues with no task types registered yet:
// the provisioning pipeline is the subject of a later issue. Nothing is enqueued until then.
package worker

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/hibiken/asynq"
)

// Queues a worker serves, with their relative priority.
var Queues = map[string]int{"critical": 6, "default": 3, "low": 1}

// Run serves tasks from Redis until ctx is done, then shuts down gracefully, letting running
// tasks finish (Asynq re-queues those that do not).
func Run(ctx context.Context, redis asynq.RedisConnOpt, concurrency int, log *slog.Logger) error {
	srv := asynq.NewServer(redis, asynq.Config{
		Concurrency: concurrency,
		Queues:      Queues,
		Logger:      asynqLogger{log},
	})
	mux := asynq.NewServeMux()
	log.Info("worker started", "concurrency", concurrency, "queues", Queues,
		"task_types", "none yet: provisioning tasks arrive with the provisioning pipeline")
	if err := srv.Start(mux); err != nil {
		return fmt.Errorf("start asynq server: %w", err)
	}
	<-ctx.Done()
	srv.Shutdown()
	log.Info("worker stopped")
	return nil
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
