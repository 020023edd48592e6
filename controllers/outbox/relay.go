package outbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"
	"github.com/cenkalti/backoff/v5"
	"github.com/hibiken/asynq"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/hook"
	"github.com/virtflow/virtflow/ent/outboxtask"
	"github.com/virtflow/virtflow/ent/predicate"
	"github.com/virtflow/virtflow/internal/platform/telemetry"
	"github.com/virtflow/virtflow/store/dbtx"
	"github.com/virtflow/virtflow/store/truncate"
)

// tracerName names the relay's tracer.
const tracerName = "github.com/virtflow/virtflow/controllers/outbox"

// Config tunes a Relay; zero fields take their defaults.
type Config struct {
	// Dialect is the database's ("postgres" or "sqlite3"); on PostgreSQL rows are claimed
	// with FOR UPDATE SKIP LOCKED.
	Dialect string
	// Poll is how often the relay looks for due rows (200 ms).
	Poll time.Duration
	// Batch bounds the rows moved per round (100).
	Batch int
	// MaxBackoff bounds the wait after Redis failed (10 s, give or take its jitter); the
	// wait starts at Poll and doubles with each failure, randomized by half either way so
	// that relays restarted together do not retry in lockstep.
	MaxBackoff time.Duration
	// Verify is how often the relay makes sure Redis still holds the tasks it dispatched
	// that no worker acknowledged yet, and enqueues again those Redis lost (30 s).
	Verify time.Duration
	// Purge is how long dispatched rows are kept (24 h).
	Purge time.Duration
	// Retention is how long Asynq keeps a completed task (and so its id, which makes a
	// second enqueue of the same row conflict) (1 h).
	Retention time.Duration
	// Options returns the Asynq options of a task kind (retries, timeout); may be nil.
	Options func(kind string) []asynq.Option
	// Queues, when set, limits the relay to the rows of these queues (a test sharing its
	// Redis, or a relay per region); empty relays every row.
	Queues []string
	// EnqueueTimeout bounds one enqueue into Redis (5 s).
	EnqueueTimeout time.Duration
	// Logger receives the relay's logs; nil discards them.
	Logger *slog.Logger
	// Tracer makes the relay's spans: one per task that carries a trace context, a child
	// of the request that recorded it and the parent of the worker's span (nil: none).
	Tracer trace.TracerProvider
	// Clock says which rows are due, dates their dispatch and places the Verify and Purge
	// cutoffs (default time.Now); tests move it to make delayed tasks due. The relay's own
	// pace (Poll, Verify, the purge every minute) follows the wall clock.
	Clock func() time.Time
}

func (c Config) withDefaults() Config {
	if c.Poll <= 0 {
		c.Poll = 200 * time.Millisecond
	}
	if c.Batch <= 0 {
		c.Batch = 100
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = 10 * time.Second
	}
	if c.Verify <= 0 {
		c.Verify = 30 * time.Second
	}
	if c.Purge <= 0 {
		c.Purge = 24 * time.Hour
	}
	if c.Retention <= 0 {
		c.Retention = time.Hour
	}
	if c.EnqueueTimeout <= 0 {
		c.EnqueueTimeout = 5 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.Tracer == nil {
		c.Tracer = noop.NewTracerProvider()
	}
	return c
}

// Relay moves due outbox rows to Asynq. Any number of relays may run against one database.
type Relay struct {
	client *ent.Client
	redis  asynq.RedisConnOpt
	asynq  *asynq.Client
	cfg    Config
	// wake is signalled when a transaction that recorded a task through client commits.
	wake chan struct{}
}

// NewRelay returns a relay from the database of client to the Redis of redis. It installs a
// hook on client's outbox rows that wakes the relay as soon as a task recorded through client
// (or a transaction of it) is committed, instead of at its next Poll. Make the relays of a
// process before it starts serving: ent's Use is not safe while the client is in use.
func NewRelay(client *ent.Client, redis asynq.RedisConnOpt, cfg Config) *Relay {
	r := &Relay{client: client, redis: redis, asynq: asynq.NewClient(redis), cfg: cfg.withDefaults(),
		wake: make(chan struct{}, 1)}
	client.OutboxTask.Use(r.wakeOnCommit)
	return r
}

// signal wakes the relay; a wake already pending is enough.
func (r *Relay) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// wakeOnCommit is the hook NewRelay installs: once a row is created, it wakes the relay
// when the row's transaction commits (never if it rolls back), or at once outside a
// transaction.
func (r *Relay) wakeOnCommit(next ent.Mutator) ent.Mutator {
	return hook.OutboxTaskFunc(func(ctx context.Context, m *ent.OutboxTaskMutation) (ent.Value, error) {
		v, err := next.Mutate(ctx, m)
		if err != nil || !m.Op().Is(ent.OpCreate) {
			return v, err
		}
		tx, terr := m.Tx()
		if terr != nil {
			r.signal()
			return v, err
		}
		tx.OnCommit(func(next ent.Committer) ent.Committer {
			return ent.CommitFunc(func(ctx context.Context, tx *ent.Tx) error {
				cerr := next.Commit(ctx, tx)
				if cerr == nil {
					r.signal()
				}
				return cerr
			})
		})
		return v, err
	})
}

// TaskID is the Asynq task id of an outbox row: its dedup key, or "outbox:<id>".
func TaskID(row *ent.OutboxTask) string {
	if row.DedupKey != nil && *row.DedupKey != "" {
		return *row.DedupKey
	}
	return "outbox:" + strconv.Itoa(row.ID)
}

// Run relays until ctx is done, then closes its Redis client. Every Config.Verify it also
// restores the unacknowledged tasks Redis lost (Verify), and every minute it purges old rows.
func (r *Relay) Run(ctx context.Context) {
	defer func() { _ = r.asynq.Close() }()
	retry := backoff.NewExponentialBackOff()
	retry.InitialInterval, retry.MaxInterval, retry.Multiplier = r.cfg.Poll, r.cfg.MaxBackoff, 2
	lastPurge, lastVerify := time.Time{}, time.Now()
	for {
		n, err := r.Once(ctx)
		wait := r.cfg.Poll
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			wait = retry.NextBackOff()
			r.cfg.Logger.Warn("outbox relay: will retry", "err", err, "retry_in", wait)
		default:
			retry.Reset()
		}
		if err == nil && time.Since(lastVerify) >= r.cfg.Verify {
			restored, err := r.Verify(ctx)
			if err != nil && ctx.Err() == nil {
				r.cfg.Logger.Warn("outbox relay: verify dispatched tasks", "err", err)
			}
			if restored > 0 {
				// Redis lost its data: a new client registers the queues again (an Asynq
				// client registers each queue once, for the monitor), as Verify's did.
				_ = r.asynq.Close()
				r.asynq = asynq.NewClient(r.redis)
			}
			lastVerify = time.Now()
		}
		if time.Since(lastPurge) > time.Minute {
			if _, err := r.Purge(ctx); err != nil && ctx.Err() == nil {
				r.cfg.Logger.Warn("outbox relay: purge", "err", err)
			}
			lastPurge = time.Now()
		}
		if err == nil && n == r.cfg.Batch {
			continue // more may be due
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		case <-r.wake:
			t.Stop()
		}
	}
}

// Once moves one batch of due rows to Asynq and returns how many it dispatched. An error
// means Redis (or the database) failed; the rows not dispatched stay for a later round.
func (r *Relay) Once(ctx context.Context) (int, error) {
	sys := system(ctx)
	now := r.cfg.Clock()
	due := []predicate.OutboxTask{outboxtask.DispatchedAtIsNil(), outboxtask.AvailableAtLTE(now)}
	if len(r.cfg.Queues) > 0 {
		due = append(due, outboxtask.QueueIn(r.cfg.Queues...))
	}
	// A cheap read first, so that idle relays open no write transaction (SQLite has one writer).
	if ok, err := r.client.OutboxTask.Query().Where(due...).Exist(sys); err != nil || !ok {
		return 0, err
	}
	var dispatched []int
	var failure error
	_, err := dbtx.Run(ctx, r.client, func(tx *ent.Client) error {
		q := tx.OutboxTask.Query().Where(due...).Order(ent.Asc(outboxtask.FieldID)).Limit(r.cfg.Batch)
		if r.cfg.Dialect == dialect.Postgres {
			q = q.ForUpdate(sql.WithLockAction(sql.SkipLocked))
		}
		rows, err := q.All(sys)
		if err != nil {
			return fmt.Errorf("claim outbox rows: %w", err)
		}
		for _, row := range rows {
			if _, err := r.enqueue(ctx, r.asynq, row); err != nil {
				failure = err
				msg := truncate.String(err.Error(), 1024) // outbox_tasks.last_error
				if uerr := tx.OutboxTask.UpdateOneID(row.ID).AddAttempts(1).SetLastError(msg).Exec(sys); uerr != nil {
					return fmt.Errorf("record relay failure: %w", uerr)
				}
				break // Redis is down or refuses: the rest waits for the next round
			}
			dispatched = append(dispatched, row.ID)
		}
		if len(dispatched) > 0 {
			err := tx.OutboxTask.Update().Where(outboxtask.IDIn(dispatched...)).
				SetDispatchedAt(r.cfg.Clock()).AddAttempts(1).Exec(sys)
			if err != nil {
				return fmt.Errorf("mark outbox rows dispatched: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return len(dispatched), failure
}

// enqueue puts row into Asynq under its task id and reports whether it was added; a task
// already there (ErrTaskIDConflict) counts as done.
func (r *Relay) enqueue(ctx context.Context, client *asynq.Client, row *ent.OutboxTask) (bool, error) {
	var opts []asynq.Option
	if r.cfg.Options != nil {
		opts = append(opts, r.cfg.Options(row.Kind)...)
	}
	opts = append(opts, asynq.TaskID(TaskID(row)), asynq.Queue(row.Queue), asynq.Retention(r.cfg.Retention))
	ctx, cancel := context.WithTimeout(ctx, r.cfg.EnqueueTimeout)
	defer cancel()
	var headers map[string]string
	if len(row.Headers) > 0 {
		// Continue the trace of the request that recorded the task, and hand it on.
		var span trace.Span
		ctx, span = r.cfg.Tracer.Tracer(tracerName).Start(
			telemetry.Propagator().Extract(ctx, propagation.MapCarrier(row.Headers)),
			"outbox relay "+row.Kind, trace.WithSpanKind(trace.SpanKindProducer),
			trace.WithAttributes(attribute.String("messaging.system", "asynq"),
				attribute.String("messaging.destination.name", row.Queue),
				attribute.String("messaging.message.id", TaskID(row))))
		defer span.End()
		headers = map[string]string{}
		telemetry.Propagator().Inject(ctx, propagation.MapCarrier(headers))
	}
	_, err := client.EnqueueContext(ctx, asynq.NewTaskWithHeaders(row.Kind, row.Payload, headers), opts...)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, asynq.ErrTaskIDConflict) || errors.Is(err, asynq.ErrDuplicateTask):
		return false, nil
	}
	return false, fmt.Errorf("enqueue %s (%s): %w", row.Kind, TaskID(row), err)
}

// Verify makes sure Redis still holds every dispatched task no worker acknowledged yet
// (Ack): it enqueues each again under its task id, which Redis refuses as a conflict while
// the task is there (pending, running, retrying, or completed and retained) and accepts
// when Redis lost it (restarted empty, flushed, failed over to a stale replica). It returns
// how many tasks it restored. Running it on many relays at once is harmless.
//
// Only tasks dispatched within Config.Retention are checked: a task that completed keeps
// its id in Redis that long, so an older unacknowledged row may be one that finished
// before acknowledgements existed, and enqueueing it again would run it a second time. (A
// task still being retried after Retention is left to the reconcile loop if Redis loses it.)
//
// It enqueues through an Asynq client of its own: a client registers each queue in Redis
// once, and a Redis that lost its data has lost that registration too.
func (r *Relay) Verify(ctx context.Context) (int, error) {
	sys := system(ctx)
	client := asynq.NewClient(r.redis)
	defer func() { _ = client.Close() }()
	since := r.cfg.Clock().Add(-r.cfg.Retention)
	restored, after := 0, 0
	for {
		q := r.client.OutboxTask.Query().
			Where(outboxtask.DispatchedAtGT(since), outboxtask.AckedAtIsNil(), outboxtask.IDGT(after)).
			Order(ent.Asc(outboxtask.FieldID)).Limit(r.cfg.Batch)
		if len(r.cfg.Queues) > 0 {
			q = q.Where(outboxtask.QueueIn(r.cfg.Queues...))
		}
		rows, err := q.All(sys)
		if err != nil {
			return restored, fmt.Errorf("read unacknowledged outbox rows: %w", err)
		}
		for _, row := range rows {
			added, err := r.enqueue(ctx, client, row)
			if err != nil {
				return restored, err
			}
			if added {
				restored++
				r.cfg.Logger.Warn("outbox relay: task missing from Redis, enqueued again",
					"task_id", TaskID(row), "kind", row.Kind, "queue", row.Queue)
			}
			after = row.ID
		}
		if len(rows) < r.cfg.Batch {
			return restored, nil
		}
	}
}

// Purge deletes rows dispatched longer ago than Config.Purge and returns how many.
func (r *Relay) Purge(ctx context.Context) (int, error) {
	return r.client.OutboxTask.Delete().
		Where(outboxtask.DispatchedAtLT(r.cfg.Clock().Add(-r.cfg.Purge))).Exec(system(ctx))
}
