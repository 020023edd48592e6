package alerting

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/hibiken/asynq"

	"github.com/virtflow/virtflow/controllers/outbox"
	"github.com/virtflow/virtflow/ent"
)

// Task types of the rule engine, all on Queue.
const (
	// TypeEvents runs the rules on a batch of stored events (reportEvents, the node
	// monitor, failed tasks). It is a task because rules write alerts and schedule hooks:
	// work that must survive a crash of the process that accepted the events.
	TypeEvents = "alerting:events"
	// TypeGroup acts once for an Aggregate rule's group when its group wait has passed.
	TypeGroup = "alerting:group"
	// TypeHook delivers one hook (HookDelivery): external, slow, retried with backoff.
	TypeHook = "alerting:hook"
)

// Queue is the queue of the rule engine's tasks, apart from provisioning so that a burst of
// events never delays a VM task (and a deployment can give it workers of its own).
const Queue = "alerting"

// Kinds are the task types the Engine serves.
var Kinds = []string{TypeEvents, TypeGroup, TypeHook}

// MaxRetry is the number of retries of the rule engine's tasks (hooks: the delivery
// attempts after the first).
const MaxRetry = 10

// TaskOptions are the Asynq options of the rule engine's tasks.
func TaskOptions(string) []asynq.Option {
	return []asynq.Option{asynq.MaxRetry(MaxRetry), asynq.Timeout(time.Minute)}
}

type eventsPayload struct {
	Events []int `json:"events"`
}

type groupPayload struct {
	Rule int    `json:"rule"`
	Key  string `json:"key"`
}

type hookPayload struct {
	Delivery int `json:"delivery"`
}

// enqueueEvents records, with client (the transaction that stored the events), the task
// that runs the rules on them.
func enqueueEvents(ctx context.Context, client *ent.Client, ids []int) error {
	if len(ids) == 0 {
		return nil
	}
	b, _ := json.Marshal(eventsPayload{Events: ids})
	return outbox.Enqueue(ctx, client, outbox.Task{Kind: TypeEvents, Queue: Queue, Payload: b})
}

func decodeTask[T any](t *asynq.Task) (T, error) {
	var p T
	if err := json.Unmarshal(t.Payload(), &p); err != nil {
		return p, fmt.Errorf("decode %s payload: %v: %w", t.Type(), err, asynq.SkipRetry)
	}
	return p, nil
}

func itoa(i int) string { return strconv.Itoa(i) }
