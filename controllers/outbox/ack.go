package outbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/hibiken/asynq"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/outboxtask"
	"github.com/virtflow/virtflow/ent/predicate"
)

// Ack records that the task with Asynq task id taskID (TaskID) is finished: its row is no
// longer checked by Verify. Acknowledging twice, or a task that did not come from the
// outbox, changes nothing.
func Ack(ctx context.Context, client *ent.Client, taskID string) error {
	match := []predicate.OutboxTask{outboxtask.DedupKey(taskID)}
	if n, ok := strings.CutPrefix(taskID, "outbox:"); ok {
		if id, err := strconv.Atoi(n); err == nil {
			match = append(match, outboxtask.And(outboxtask.ID(id), outboxtask.DedupKeyIsNil()))
		}
	}
	err := client.OutboxTask.Update().Where(outboxtask.AckedAtIsNil(), outboxtask.Or(match...)).
		SetAckedAt(time.Now()).Exec(system(ctx))
	if err != nil {
		return fmt.Errorf("outbox: acknowledge task %s: %w", taskID, err)
	}
	return nil
}

// Acknowledge is the Asynq middleware of a worker serving outbox tasks: once a handler
// has finished a task for good — it succeeded, or failed without a retry left (its last
// retry, asynq.SkipRetry or asynq.RevokeTask) — the task's outbox row is acknowledged (Ack), so the relays
// stop making sure Redis holds it. A nil log discards. Until then a Redis that loses the task gets it back
// (Relay.Verify). A failed acknowledgement is logged; the task is not failed for it (the
// relay then finds it retained in Redis, or enqueues it again for an idempotent rerun).
func Acknowledge(client *ent.Client, log *slog.Logger) asynq.MiddlewareFunc {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return func(next asynq.Handler) asynq.Handler {
		return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
			err := next.ProcessTask(ctx, t)
			id, ok := asynq.GetTaskID(ctx)
			if !ok || !finished(ctx, err) {
				return err
			}
			if aerr := Ack(context.WithoutCancel(ctx), client, id); aerr != nil {
				log.Warn("outbox: acknowledge task", "task_id", id, "type", t.Type(), "err", aerr)
			}
			return err
		})
	}
}

// finished reports whether a task whose handler returned err will not run again.
func finished(ctx context.Context, err error) bool {
	if err == nil || errors.Is(err, asynq.SkipRetry) || errors.Is(err, asynq.RevokeTask) {
		return true
	}
	retried, _ := asynq.GetRetryCount(ctx)
	max, _ := asynq.GetMaxRetry(ctx)
	return retried >= max
}
