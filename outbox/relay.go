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
	"github.com/hibiken/asynq"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/outboxtask"
	"github.com/virtflow/virtflow/ent/predicate"
	"github.com/virtflow/virtflow/internal/truncate"
)

// Config tunes a Relay; zero fields take their defaults.
type Config struct {
	// Dialect is the database's ("postgres" or "sqlite3"); on PostgreSQL rows are claimed
	// with FOR UPDATE SKIP LOCKED.
	Dialect string
	// Poll is how often the relay looks for due rows (200 ms).
	Poll time.Duration
	// Batch bounds the rows moved per round (100).
	Batch int
	// MaxBackoff bounds the wait after Redis failed (10 s); the wait starts at Poll and
	// doubles with each failure.
	MaxBackoff time.Duration
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
	return c
}

// Relay moves due outbox rows to Asynq. Any number of relays may run against one database.
type Relay struct {
	client *ent.Client
	asynq  *asynq.Client
	cfg    Config
}

// NewRelay returns a relay from the database of client to the Redis of redis.
func NewRelay(client *ent.Client, redis asynq.RedisConnOpt, cfg Config) *Relay {
	return &Relay{client: client, asynq: asynq.NewClient(redis), cfg: cfg.withDefaults()}
}

// TaskID is the Asynq task id of an outbox row: its dedup key, or "outbox:<id>".
func TaskID(row *ent.OutboxTask) string {
	if row.DedupKey != nil && *row.DedupKey != "" {
		return *row.DedupKey
	}
	return "outbox:" + strconv.Itoa(row.ID)
}

// Run relays until ctx is done, then closes its Redis client.
func (r *Relay) Run(ctx context.Context) {
	defer r.asynq.Close()
	wait := r.cfg.Poll
	lastPurge := time.Time{}
	for {
		n, err := r.Once(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			wait = min(wait*2, r.cfg.MaxBackoff)
			r.cfg.Logger.Warn("outbox relay: will retry", "err", err, "retry_in", wait)
		default:
			wait = r.cfg.Poll
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
		case <-wake:
			t.Stop()
		}
	}
}

// Once moves one batch of due rows to Asynq and returns how many it dispatched. An error
// means Redis (or the database) failed; the rows not dispatched stay for a later round.
func (r *Relay) Once(ctx context.Context) (int, error) {
	sys := system(ctx)
	now := time.Now()
	due := []predicate.OutboxTask{outboxtask.DispatchedAtIsNil(), outboxtask.AvailableAtLTE(now)}
	if len(r.cfg.Queues) > 0 {
		due = append(due, outboxtask.QueueIn(r.cfg.Queues...))
	}
	// A cheap read first, so that idle relays open no write transaction (SQLite has one writer).
	if ok, err := r.client.OutboxTask.Query().Where(due...).Exist(sys); err != nil || !ok {
		return 0, err
	}
	tx, err := r.client.Tx(ctx)
	if err != nil {
		return 0, fmt.Errorf("begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	q := tx.OutboxTask.Query().Where(due...).Order(ent.Asc(outboxtask.FieldID)).Limit(r.cfg.Batch)
	if r.cfg.Dialect == dialect.Postgres {
		q = q.ForUpdate(sql.WithLockAction(sql.SkipLocked))
	}
	rows, err := q.All(sys)
	if err != nil {
		return 0, fmt.Errorf("claim outbox rows: %w", err)
	}
	var dispatched []int
	var failure error
	for _, row := range rows {
		if err := r.enqueue(ctx, row); err != nil {
			failure = err
			msg := truncate.String(err.Error(), 1024) // outbox_tasks.last_error
			if uerr := tx.OutboxTask.UpdateOneID(row.ID).AddAttempts(1).SetLastError(msg).Exec(sys); uerr != nil {
				return 0, fmt.Errorf("record relay failure: %w", uerr)
			}
			break // Redis is down or refuses: the rest waits for the next round
		}
		dispatched = append(dispatched, row.ID)
	}
	if len(dispatched) > 0 {
		err := tx.OutboxTask.Update().Where(outboxtask.IDIn(dispatched...)).
			SetDispatchedAt(time.Now()).AddAttempts(1).Exec(sys)
		if err != nil {
			return 0, fmt.Errorf("mark outbox rows dispatched: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("commit: %w", err)
	}
	return len(dispatched), failure
}

// enqueue puts row into Asynq under its task id; a task already there counts as done.
func (r *Relay) enqueue(ctx context.Context, row *ent.OutboxTask) error {
	var opts []asynq.Option
	if r.cfg.Options != nil {
		opts = append(opts, r.cfg.Options(row.Kind)...)
	}
	opts = append(opts, asynq.TaskID(TaskID(row)), asynq.Queue(row.Queue), asynq.Retention(r.cfg.Retention))
	ctx, cancel := context.WithTimeout(ctx, r.cfg.EnqueueTimeout)
	defer cancel()
	_, err := r.asynq.EnqueueContext(ctx, asynq.NewTask(row.Kind, row.Payload), opts...)
	if err == nil || errors.Is(err, asynq.ErrTaskIDConflict) || errors.Is(err, asynq.ErrDuplicateTask) {
		return nil
	}
	return fmt.Errorf("enqueue %s (%s): %w", row.Kind, TaskID(row), err)
}

// Purge deletes rows dispatched longer ago than Config.Purge and returns how many.
func (r *Relay) Purge(ctx context.Context) (int, error) {
	return r.client.OutboxTask.Delete().
		Where(outboxtask.DispatchedAtLT(time.Now().Add(-r.cfg.Purge))).Exec(system(ctx))
}
