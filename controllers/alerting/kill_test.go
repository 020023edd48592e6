package alerting_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/virtflow/virtflow/controllers/alerting"
	"github.com/virtflow/virtflow/controllers/outbox"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent/event"
	"github.com/virtflow/virtflow/ent/eventrule"
	"github.com/virtflow/virtflow/ent/hookdelivery"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/testkit/poll"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// Environment of the worker process TestWorkerProcessKilled starts (this test binary again).
const (
	envWorkerDSN   = "VIRTFLOW_ALERTING_KILL_DSN"
	envWorkerRedis = "VIRTFLOW_ALERTING_KILL_REDIS"
	envWorkerDB    = "VIRTFLOW_ALERTING_KILL_REDIS_DB"
)

// TestWorkerProcessHelper is the worker of TestWorkerProcessKilled when run as its child
// process; otherwise it does nothing.
func TestWorkerProcessHelper(t *testing.T) {
	dsn := os.Getenv(envWorkerDSN)
	if dsn == "" {
		return
	}
	db, err := infra.OpenDatabase(context.Background(), dsn, "")
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(os.Getenv(envWorkerDB))
	worker(db.Client, asynq.RedisClientOpt{Addr: os.Getenv(envWorkerRedis), DB: n})
	select {} // until killed
}

// TestWorkerProcessKilled: the worker runs as a process of its own and is killed with
// SIGKILL twice in the middle of a burst of hooked events (no shutdown, tasks cut off
// wherever they are); a new process takes over each time. Every event is processed and
// every hook delivered in the end; a hook received twice carries the same idempotency key.
func TestWorkerProcessKilled(t *testing.T) {
	dsn := testdb.New(t)
	db, err := infra.OpenDatabase(context.Background(), dsn, "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := db.Client
	s, err := placementtest.Build(placementtest.Ctx(), c, placementtest.Spec{Racks: 1, HostsPerRack: 2, CPU: 8,
		MemoryMB: 8192, DiskGB: 100, Cores: 4})
	if err != nil {
		t.Fatal(err)
	}
	ctx := sys()
	hooks := newHookServer(t, "", 0)
	rule(c, "hook-all", eventrule.KindAction).SetAction(eventrule.ActionCallHook).SetHookURL(hooks.URL).SaveX(ctx)
	rd := privateRedis(t).(asynq.RedisClientOpt)
	rctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	relay := outbox.NewRelay(c, rd, outbox.Config{Dialect: db.Dialect, Poll: 20 * time.Millisecond, Verify: time.Second,
		Options: alerting.TaskOptions})
	go relay.Run(rctx)

	start := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^TestWorkerProcessHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), envWorkerDSN+"="+dsn, envWorkerRedis+"="+rd.Addr, envWorkerDB+"="+strconv.Itoa(rd.DB))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	kill := func(cmd *exec.Cmd) {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	const batches, per = 20, 10
	w := start()
	for b := range batches {
		var in []alerting.EventInput
		for i := range per {
			in = append(in, alerting.EventInput{NodeID: s.Nodes[i%2].ID, CheckName: fmt.Sprintf("k%d-%d", b, i), Status: event.StatusCritical})
		}
		report(t, c, ctx, in...)
		if b == 7 || b == 14 {
			time.Sleep(300 * time.Millisecond) // let it get busy
			kill(w)
			w = start()
		}
	}
	defer kill(w)
	// A task cut off by the kill comes back once its lease expires (Asynq: 30 s): a hook
	// sent just before the kill is sent again then, and only then recorded DELIVERED.
	poll.Until(t, 3*time.Minute, func() error {
		if n := len(hooks.received()); n != batches*per {
			return fmt.Errorf("%d of %d hooks", n, batches*per)
		}
		if n := c.HookDelivery.Query().Where(hookdelivery.StatusNEQ(hookdelivery.StatusDelivered)).CountX(ctx); n != 0 {
			return fmt.Errorf("%d deliveries not DELIVERED yet", n)
		}
		return nil
	})
	if n := c.Event.Query().Where(event.ProcessedAtIsNil()).CountX(ctx); n != 0 {
		t.Errorf("%d events never processed", n)
	}
	dup := 0
	for _, n := range hooks.keys {
		dup += n - 1
	}
	t.Logf("%d hooks, %d received again under the same idempotency key", len(hooks.received()), dup)
}
