package outbox_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/virtflow/virtflow/controllers/outbox"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/outboxtask"
	"github.com/virtflow/virtflow/internal/testkit/poll"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// privateRedis is a redis-server of the test's own, which it may flush.
func privateRedis(t *testing.T) (asynq.RedisConnOpt, *redis.Client) {
	opts, err := redis.ParseURL(testdb.PrivateRedis(t))
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() { _ = c.Close() })
	return asynq.RedisClientOpt{Addr: opts.Addr, DB: opts.DB}, c
}

func taskIDs(t *testing.T, rd asynq.RedisConnOpt, q string) []string {
	t.Helper()
	in := asynq.NewInspector(rd)
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
	slices.Sort(ids)
	return ids
}

func rowIDs(rows []*ent.OutboxTask) []string {
	var ids []string
	for _, r := range rows {
		ids = append(ids, outbox.TaskID(r))
	}
	slices.Sort(ids)
	return ids
}

// TestVerifyRestoresLostTasks: tasks relayed to a Redis that then loses its data come back
// with the next Verify, except those a worker acknowledged and those dispatched before the
// retention window; a second Verify adds nothing.
func TestVerifyRestoresLostTasks(t *testing.T) {
	db := postgres(t)
	rd, raw := privateRedis(t)
	q := "outbox-verify"
	inTx(t, db.Client, true, outbox.Task{Kind: "test:a", Queue: q}, outbox.Task{Kind: "test:b", Queue: q, DedupKey: "b:" + q},
		outbox.Task{Kind: "test:c", Queue: q})
	r := outbox.NewRelay(db.Client, rd, outbox.Config{Dialect: db.Dialect, Queues: []string{q}})
	if n, err := r.Once(context.Background()); err != nil || n != 3 {
		t.Fatalf("relay: %d, %v; want 3", n, err)
	}
	rows := db.Client.OutboxTask.Query().Where(outboxtask.Queue(q)).Order(ent.Asc(outboxtask.FieldID)).AllX(sys())
	if n, err := r.Verify(context.Background()); err != nil || n != 0 {
		t.Fatalf("verify with every task in Redis: restored %d, %v; want 0", n, err)
	}
	// A worker finished the first task.
	if err := outbox.Ack(context.Background(), db.Client, outbox.TaskID(rows[0])); err != nil {
		t.Fatal(err)
	}
	if err := raw.FlushAll(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	// A row dispatched before the retention window may have finished before
	// acknowledgements existed: it is not checked.
	db.Client.OutboxTask.UpdateOneID(rows[2].ID).SetDispatchedAt(time.Now().Add(-2 * time.Hour)).ExecX(sys())
	n, err := r.Verify(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("verify after Redis lost its data: restored %d, %v; want the 1 unacknowledged recent task", n, err)
	}
	if got, want := taskIDs(t, rd, q), rowIDs(rows[1:2]); !slices.Equal(got, want) {
		t.Fatalf("tasks in Redis %v, want %v", got, want)
	}
	if n, err := r.Verify(context.Background()); err != nil || n != 0 {
		t.Fatalf("second verify: restored %d, %v; want 0", n, err)
	}
}

// TestAcknowledge: the worker middleware acknowledges a task that succeeded or failed for
// good (SkipRetry), not one that will be retried.
func TestAcknowledge(t *testing.T) {
	db := postgres(t)
	rd, _ := privateRedis(t)
	q := "outbox-ack"
	inTx(t, db.Client, true, outbox.Task{Kind: "test:ok", Queue: q}, outbox.Task{Kind: "test:skip", Queue: q},
		outbox.Task{Kind: "test:retry", Queue: q})
	r := outbox.NewRelay(db.Client, rd, outbox.Config{Dialect: db.Dialect, Queues: []string{q},
		Options: func(string) []asynq.Option { return []asynq.Option{asynq.MaxRetry(3)} }})
	if n, err := r.Once(context.Background()); err != nil || n != 3 {
		t.Fatalf("relay: %d, %v", n, err)
	}
	var mu sync.Mutex
	ran := map[string]int{}
	done := make(chan struct{}, 3)
	mux := asynq.NewServeMux()
	mux.Use(outbox.Acknowledge(db.Client, nil))
	mux.HandleFunc("test:", func(ctx context.Context, task *asynq.Task) error {
		mu.Lock()
		ran[task.Type()]++
		first := ran[task.Type()] == 1
		mu.Unlock()
		defer func() {
			if first {
				done <- struct{}{}
			}
		}()
		switch task.Type() {
		case "test:skip":
			return fmt.Errorf("bad payload: %w", asynq.SkipRetry)
		case "test:retry":
			return errors.New("try again")
		}
		return nil
	})
	srv := asynq.NewServer(rd, asynq.Config{Queues: map[string]int{q: 1}, Concurrency: 3,
		RetryDelayFunc: func(int, error, *asynq.Task) time.Duration { return time.Hour }})
	if err := srv.Start(mux); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("tasks not run")
		}
	}
	srv.Shutdown()
	acked := map[string]bool{}
	for _, row := range db.Client.OutboxTask.Query().Where(outboxtask.Queue(q)).AllX(sys()) {
		acked[row.Kind] = row.AckedAt != nil
	}
	if !acked["test:ok"] || !acked["test:skip"] || acked["test:retry"] {
		t.Fatalf("acknowledged: %v; want test:ok and test:skip, not test:retry (it will run again)", acked)
	}
}

// TestRedisComesBackEmpty: the whole path with Run. Tasks relayed while no worker runs are
// lost when Redis loses its data; a relay running with Verify every second puts them back,
// and a worker started afterwards completes every one, exactly once each, and acknowledges
// it. It logs the time from the loss to the last completion.
func TestRedisComesBackEmpty(t *testing.T) {
	db := postgres(t)
	rd, raw := privateRedis(t)
	q := "outbox-empty"
	const tasks = 20
	var batch []outbox.Task
	for i := range tasks {
		batch = append(batch, outbox.Task{Kind: "test:work", Queue: q, Payload: []byte(fmt.Sprint(i))})
	}
	inTx(t, db.Client, true, batch...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	relay := outbox.NewRelay(db.Client, rd, outbox.Config{Dialect: db.Dialect, Queues: []string{q}, Verify: time.Second})
	relayDone := make(chan struct{})
	go func() { defer close(relayDone); relay.Run(ctx) }()
	defer func() { cancel(); <-relayDone }()
	poll.Until(t, 20*time.Second, func() error {
		if n := len(taskIDs(t, rd, q)); n < tasks {
			return fmt.Errorf("only %d of %d tasks relayed", n, tasks)
		}
		return nil
	})
	if err := raw.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	lost := time.Now()

	var mu sync.Mutex
	ran := map[string]int{}
	mux := asynq.NewServeMux()
	mux.Use(outbox.Acknowledge(db.Client, nil))
	mux.HandleFunc("test:work", func(ctx context.Context, task *asynq.Task) error {
		mu.Lock()
		defer mu.Unlock()
		ran[string(task.Payload())]++
		return nil
	})
	srv := asynq.NewServer(rd, asynq.Config{Queues: map[string]int{q: 1}, Concurrency: 4})
	if err := srv.Start(mux); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	unacked := func() int {
		return db.Client.OutboxTask.Query().Where(outboxtask.Queue(q), outboxtask.AckedAtIsNil()).CountX(sys())
	}
	poll.Until(t, 60*time.Second, func() error {
		if n := unacked(); n > 0 {
			return fmt.Errorf("%d of %d tasks still unacknowledged after Redis lost them", n, tasks)
		}
		return nil
	})
	t.Logf("%d tasks lost with Redis's data were restored and completed %v after the loss (Verify every 1 s)",
		tasks, time.Since(lost).Round(time.Millisecond))
	mu.Lock()
	defer mu.Unlock()
	if len(ran) != tasks {
		t.Fatalf("%d distinct tasks ran, want %d", len(ran), tasks)
	}
	for p, n := range ran {
		if n != 1 {
			t.Errorf("task %s ran %d times, want once", p, n)
		}
	}
}
