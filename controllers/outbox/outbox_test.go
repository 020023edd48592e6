package outbox_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/controllers/outbox"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/outboxtask"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/testkit/poll"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

func sys() context.Context { return authz.SystemContext(context.Background(), "test") }

// queue is a queue name of this test alone: the Redis is shared with other test packages.
func queue(t *testing.T) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	q := "outbox-test-" + hex.EncodeToString(b)
	t.Cleanup(func() {
		in := asynq.NewInspector(realRedis(t))
		_ = in.DeleteQueue(q, true)
		_ = in.Close()
	})
	return q
}

func realRedis(t *testing.T) asynq.RedisConnOpt {
	opts, err := redis.ParseURL(testdb.RedisURL())
	if err != nil {
		t.Fatal(err)
	}
	return asynq.RedisClientOpt{Addr: opts.Addr, DB: opts.DB, Password: opts.Password}
}

func postgres(t *testing.T) *infra.Database {
	db, err := infra.OpenDatabase(context.Background(), testdb.DSN(t), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// tasksIn lists the task ids in q, whatever their state.
func tasksIn(t *testing.T, q string) []string {
	t.Helper()
	in := asynq.NewInspector(realRedis(t))
	defer in.Close()
	var ids []string
	for _, list := range []func(string, ...asynq.ListOption) ([]*asynq.TaskInfo, error){
		in.ListPendingTasks, in.ListScheduledTasks, in.ListActiveTasks, in.ListRetryTasks, in.ListCompletedTasks} {
		ts, err := list(q, asynq.PageSize(1000))
		if err != nil && !errors.Is(err, asynq.ErrQueueNotFound) {
			t.Fatal(err)
		}
		for _, ti := range ts {
			ids = append(ids, ti.ID)
		}
	}
	return ids
}

// inTx enqueues in a transaction and commits or rolls back.
func inTx(t *testing.T, c *ent.Client, commit bool, tasks ...outbox.Task) {
	t.Helper()
	tx, err := c.Tx(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx := ent.NewTxContext(ent.NewContext(context.Background(), tx.Client()), tx)
	for _, task := range tasks {
		if err := outbox.Enqueue(ctx, tx.Client(), task); err != nil {
			t.Fatal(err)
		}
	}
	if commit {
		err = tx.Commit()
	} else {
		err = tx.Rollback()
	}
	if err != nil {
		t.Fatal(err)
	}
}

func undispatched(t *testing.T, c *ent.Client, q string) []*ent.OutboxTask {
	t.Helper()
	return c.OutboxTask.Query().Where(outboxtask.Queue(q), outboxtask.DispatchedAtIsNil()).AllX(sys())
}

// TestRedisDown: tasks accepted while Redis is unreachable wait in the outbox (attempts and
// the error recorded) and arrive exactly once when a relay reaches Redis.
func TestRedisDown(t *testing.T) {
	db := postgres(t)
	q := queue(t)
	inTx(t, db.Client, true, outbox.Task{Kind: "test:a", Queue: q, Payload: []byte("1")},
		outbox.Task{Kind: "test:b", Queue: q, DedupKey: "test:b:" + q})

	down := outbox.NewRelay(db.Client, asynq.RedisClientOpt{Addr: "127.0.0.1:1"}, outbox.Config{Dialect: db.Dialect, EnqueueTimeout: time.Second})
	if n, err := down.Once(context.Background()); err == nil || n != 0 {
		t.Fatalf("relay to an unreachable Redis: dispatched %d, err %v; want 0 and an error", n, err)
	}
	rows := undispatched(t, db.Client, q)
	if len(rows) != 2 || rows[0].Attempts != 1 || rows[0].LastError == "" {
		t.Fatalf("after a failed relay: %d undispatched rows, first %+v; want 2, attempts 1 and the error", len(rows), rows[0])
	}

	up := outbox.NewRelay(db.Client, realRedis(t), outbox.Config{Dialect: db.Dialect})
	if n, err := up.Once(context.Background()); err != nil || n != 2 {
		t.Fatalf("relay with Redis back: dispatched %d, err %v; want 2", n, err)
	}
	if n, err := up.Once(context.Background()); err != nil || n != 0 {
		t.Fatalf("second round: dispatched %d, err %v; want nothing left", n, err)
	}
	ids := tasksIn(t, q)
	if len(ids) != 2 {
		t.Fatalf("tasks in Redis: %v; want exactly 2", ids)
	}
	if len(undispatched(t, db.Client, q)) != 0 {
		t.Fatal("rows still undispatched")
	}
}

// TestRelayCrashBetweenEnqueueAndMark: a relay that died after putting a task into Redis
// and before marking its row leaves the row due; the next relay finds the task id taken
// and only marks the row, so the task is in Redis once.
func TestRelayCrashBetweenEnqueueAndMark(t *testing.T) {
	db := postgres(t)
	q := queue(t)
	inTx(t, db.Client, true, outbox.Task{Kind: "test:crash", Queue: q}, outbox.Task{Kind: "test:crash", Queue: q, DedupKey: "k:" + q})
	rows := undispatched(t, db.Client, q)
	// What the dead relay did: enqueue under the row's task id, never mark.
	cl := asynq.NewClient(realRedis(t))
	defer cl.Close()
	for _, row := range rows {
		if _, err := cl.Enqueue(asynq.NewTask(row.Kind, row.Payload), asynq.Queue(q), asynq.TaskID(outbox.TaskID(row))); err != nil {
			t.Fatal(err)
		}
	}
	r := outbox.NewRelay(db.Client, realRedis(t), outbox.Config{Dialect: db.Dialect})
	if n, err := r.Once(context.Background()); err != nil || n != 2 {
		t.Fatalf("relay after the crash: dispatched %d, err %v; want both rows marked", n, err)
	}
	if ids := tasksIn(t, q); len(ids) != 2 {
		t.Fatalf("tasks in Redis: %v; want 2 (no duplicate)", ids)
	}
}

// TestEnqueueIsTransactional: a rolled-back mutation leaves no task; a repeated dedup key
// leaves one row.
func TestEnqueueIsTransactional(t *testing.T) {
	db := postgres(t)
	q := queue(t)
	inTx(t, db.Client, false, outbox.Task{Kind: "test:rollback", Queue: q})
	key := "dedup:" + q
	inTx(t, db.Client, true, outbox.Task{Kind: "test:d", Queue: q, DedupKey: key}, outbox.Task{Kind: "test:d", Queue: q, DedupKey: key})
	inTx(t, db.Client, true, outbox.Task{Kind: "test:d", Queue: q, DedupKey: key})
	rows := undispatched(t, db.Client, q)
	if len(rows) != 1 || rows[0].Kind != "test:d" {
		t.Fatalf("rows: %d; want only the one deduplicated task", len(rows))
	}
}

// TestConcurrentRelays: four relays over 300 rows dispatch each exactly once (SKIP LOCKED).
func TestConcurrentRelays(t *testing.T) {
	db := postgres(t)
	q := queue(t)
	var tasks []outbox.Task
	for i := range 300 {
		tasks = append(tasks, outbox.Task{Kind: "test:many", Queue: q, Payload: []byte(fmt.Sprint(i))})
	}
	inTx(t, db.Client, true, tasks...)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := outbox.NewRelay(db.Client, realRedis(t), outbox.Config{Dialect: db.Dialect, Batch: 25})
			for {
				n, err := r.Once(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				if n == 0 && len(undispatched(t, db.Client, q)) == 0 {
					return
				}
			}
		}()
	}
	wg.Wait()
	// Every dispatch of a row counts one attempt: each row was dispatched exactly once.
	if n := db.Client.OutboxTask.Query().Where(outboxtask.Queue(q), outboxtask.AttemptsNEQ(1)).CountX(sys()); n != 0 {
		t.Fatalf("%d rows were dispatched more than once (or never)", n)
	}
	if ids := tasksIn(t, q); len(ids) != 300 {
		t.Fatalf("%d tasks in Redis; want 300", len(ids))
	}
}

// TestSQLiteAndRun: the embedded path, SQLite and the in-process Redis, with Run woken by
// the commit and Purge.
func TestSQLiteAndRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db, err := infra.OpenDatabase(ctx, "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.Dialect != dialect.SQLite {
		t.Fatalf("dialect %s", db.Dialect)
	}
	rd, err := infra.OpenRedis(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	r := outbox.NewRelay(db.Client, rd.Asynq, outbox.Config{Dialect: db.Dialect, Poll: time.Hour})
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	inTx(t, db.Client, true, outbox.Task{Kind: "test:embedded", Queue: "q1"})
	in := asynq.NewInspector(rd.Asynq)
	defer in.Close()
	poll.Until(t, 10*time.Second, func() error {
		info, err := in.GetQueueInfo("q1")
		if err == nil && info.Size == 1 {
			return nil
		}
		return fmt.Errorf("task not relayed (woken by the commit, poll 1 h): %v %+v", err, info)
	})
	cancel()
	<-done
	purger := outbox.NewRelay(db.Client, rd.Asynq, outbox.Config{Dialect: db.Dialect, Purge: time.Nanosecond})
	if n, err := purger.Purge(context.Background()); err != nil || n != 1 {
		t.Fatalf("purge: %d, %v; want the dispatched row purged", n, err)
	}
}

// TestEachRelayWokenByItsCommits: of two relays polling once an hour, each on a client of its
// own, the one whose client commits a task is woken every time: the other cannot take its
// wake-up. (A process-wide wake signal shared by every relay went to whichever waited
// longest, so the relay of the committing client slept on every other commit.)
func TestEachRelayWokenByItsCommits(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	clients := []*ent.Client{postgres(t).Client, postgres(t).Client}
	queues := []string{queue(t), queue(t)}
	var done []chan struct{}
	defer func() {
		cancel()
		for _, d := range done {
			<-d
		}
	}()
	for i, c := range clients {
		r := outbox.NewRelay(c, realRedis(t), outbox.Config{Dialect: dialect.Postgres, Poll: time.Hour, Queues: queues[i : i+1]})
		d := make(chan struct{})
		done = append(done, d)
		go func() { defer close(d); r.Run(ctx) }()
	}
	for round := 1; round <= 3; round++ {
		inTx(t, clients[1], true, outbox.Task{Kind: "test:woken", Queue: queues[1], Payload: []byte(fmt.Sprint(round))})
		poll.Until(t, 10*time.Second, func() error {
			if n := len(tasksIn(t, queues[1])); n != round {
				return fmt.Errorf("round %d: queue holds %d tasks: the relay of the committing client was not woken", round, n)
			}
			return nil
		})
	}
}

// TestRelayClock: a delayed task is relayed once the relay's clock reaches its time, not
// before; tests drive that clock instead of waiting.
func TestRelayClock(t *testing.T) {
	db := postgres(t)
	q := queue(t)
	inTx(t, db.Client, true, outbox.Task{Kind: "test:later", Queue: q, Delay: time.Hour})
	now := time.Now().Truncate(time.Microsecond) // as PostgreSQL stores it
	r := outbox.NewRelay(db.Client, realRedis(t), outbox.Config{Dialect: db.Dialect, Queues: []string{q},
		Clock: func() time.Time { return now }})
	if n, err := r.Once(context.Background()); err != nil || n != 0 {
		t.Fatalf("Once before the delay: %d, %v; want nothing relayed", n, err)
	}
	now = now.Add(time.Hour + time.Minute)
	if n, err := r.Once(context.Background()); err != nil || n != 1 {
		t.Fatalf("Once after the delay by the relay's clock: %d, %v; want the task relayed", n, err)
	}
	if got := db.Client.OutboxTask.Query().Where(outboxtask.Queue(q)).OnlyX(sys()); got.DispatchedAt == nil || !got.DispatchedAt.Equal(now) {
		t.Fatalf("dispatched at %v; want the relay's clock %v", got.DispatchedAt, now)
	}
}

// BenchmarkRelay measures how fast one relay moves committed rows from PostgreSQL to a real
// Redis, in batches of 100.
func BenchmarkRelay(b *testing.B) {
	db, err := infra.OpenDatabase(context.Background(), testdb.DSN(b), "")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	opts, _ := redis.ParseURL(testdb.RedisURL())
	rd := asynq.RedisClientOpt{Addr: opts.Addr, DB: opts.DB, Password: opts.Password}
	q := "outbox-bench-" + hex.EncodeToString([]byte(time.Now().Format("150405.000")))
	defer func() { in := asynq.NewInspector(rd); _ = in.DeleteQueue(q, true); _ = in.Close() }()
	r := outbox.NewRelay(db.Client, rd, outbox.Config{Dialect: db.Dialect})
	const rows = 1000
	total := 0
	var elapsed time.Duration
	for range b.N {
		b.StopTimer()
		tx, _ := db.Client.Tx(context.Background())
		bulk := make([]*ent.OutboxTaskCreate, rows)
		for i := range bulk {
			bulk[i] = tx.OutboxTask.Create().SetKind("bench").SetQueue(q).SetPayload([]byte(fmt.Sprint(i)))
		}
		tx.OutboxTask.CreateBulk(bulk...).ExecX(sys())
		_ = tx.Commit()
		b.StartTimer()
		start := time.Now()
		for {
			n, err := r.Once(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			if n == 0 {
				break
			}
			total += n
		}
		elapsed += time.Since(start)
	}
	b.ReportMetric(float64(total)/elapsed.Seconds(), "tasks/s")
}
