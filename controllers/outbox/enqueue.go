package outbox

import (
	"context"
	stdsql "database/sql"
	"errors"
	"fmt"
	"time"

	"entgo.io/ent/dialect/sql"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/outboxtask"
	"github.com/virtflow/virtflow/internal/platform/telemetry"
)

// DefaultQueue is the queue of tasks that name none.
const DefaultQueue = "default"

// Task is a unit of work to hand to the workers.
type Task struct {
	// Kind is the Asynq task type, e.g. "vm:create".
	Kind string
	// Queue is the Asynq queue; DefaultQueue when empty.
	Queue string
	// Payload is the task's payload, usually JSON.
	Payload []byte
	// DedupKey, when set, makes the task happen at most once per key: a second Enqueue with
	// the same key is ignored, and the key is the Asynq task id.
	DedupKey string
	// Delay postpones the task: it is not relayed before now + Delay.
	Delay time.Duration
}

// traceHeaders is the W3C trace context of ctx's span, to carry the trace from the request
// that records a task to the worker that runs it; nil when ctx has no span (tracing off).
func traceHeaders(ctx context.Context) map[string]string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return nil
	}
	h := propagation.MapCarrier{}
	telemetry.Propagator().Inject(ctx, h)
	return h
}

// system is ctx acting as the outbox: no role may touch the outbox table.
func system(ctx context.Context) context.Context { return authz.SystemContext(ctx, "outbox") }

// Enqueue records t with client, which should be the transactional client of the caller's
// transaction (a GraphQL mutation's): the task is relayed only if that transaction commits.
// A task whose DedupKey is already recorded is ignored. The relays made on client (NewRelay)
// are woken when the row is committed.
func Enqueue(ctx context.Context, client *ent.Client, t Task) error {
	if t.Kind == "" {
		return fmt.Errorf("outbox: task without a kind")
	}
	if t.Queue == "" {
		t.Queue = DefaultQueue
	}
	c := client.OutboxTask.Create().SetKind(t.Kind).SetQueue(t.Queue).SetPayload(t.Payload).
		SetAvailableAt(time.Now().Add(t.Delay))
	if h := traceHeaders(ctx); h != nil {
		c.SetHeaders(h)
	}
	var err error
	if t.DedupKey != "" {
		err = c.SetDedupKey(t.DedupKey).
			OnConflict(sql.ConflictColumns(outboxtask.FieldDedupKey)).DoNothing().Exec(system(ctx))
		if errors.Is(err, stdsql.ErrNoRows) { // DO NOTHING: the key was already there
			err = nil
		}
	} else {
		err = c.Exec(system(ctx))
	}
	if err != nil {
		return fmt.Errorf("outbox: record %s task: %w", t.Kind, err)
	}
	return nil
}
