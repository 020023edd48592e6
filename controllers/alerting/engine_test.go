package alerting_test

import (
	"context"
	"crypto/hmac"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/controllers/alerting"
	"github.com/virtflow/virtflow/controllers/nodemonitor"
	"github.com/virtflow/virtflow/controllers/outbox"
	"github.com/virtflow/virtflow/domain/egress"
	"github.com/virtflow/virtflow/domain/nodestatus"
	"github.com/virtflow/virtflow/domain/placement"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/alert"
	"github.com/virtflow/virtflow/ent/event"
	"github.com/virtflow/virtflow/ent/eventrule"
	"github.com/virtflow/virtflow/ent/hookdelivery"
	"github.com/virtflow/virtflow/ent/outboxtask"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/platform/secrets"
	"github.com/virtflow/virtflow/internal/testkit/poll"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
	"github.com/virtflow/virtflow/store/dbtx"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// site builds racks of nodes in a fresh database of the test's own (testdb.New), so rules
// and alerts of one test never meet another's.
func site(tb testing.TB, nodes int) (*infra.Database, *placementtest.Site) {
	tb.Helper()
	db, err := infra.OpenDatabase(context.Background(), testdb.New(tb), "")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	alerting.Install(db.Client, testEgress(), testKeys())
	s, err := placementtest.Build(placementtest.Ctx(), db.Client, placementtest.Spec{Racks: 1, HostsPerRack: nodes, CPU: 8,
		MemoryMB: 8192, DiskGB: 100, Cores: 4})
	if err != nil {
		tb.Fatal(err)
	}
	return db, s
}

// testEgress is the tests' egress policy: the default one, plus the loopback address the
// tests' hook servers (httptest) listen on.
func testEgress() *egress.Policy { return egress.MustParse("127.0.0.1/32") }

// testKeys seals the tests' hook secrets (a fixed key: every client of a test shares it).
func testKeys() *secrets.Keyring {
	k, err := secrets.NewKeyring([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		panic(err)
	}
	return k
}

func sys() context.Context { return authz.SystemContext(context.Background(), "test") }

func agent(node int) context.Context {
	return authz.NewContext(context.Background(), &authz.Viewer{Name: fmt.Sprintf("agent:%d", node),
		Bindings: []authz.Binding{{Role: authz.RoleAgent, Domain: authz.NodeDomain(node)}}})
}

// report files events as the agent of their node (alerting.Report in a transaction, as the
// reportEvents mutation does) and returns their ids.
func report(tb testing.TB, c *ent.Client, ctx context.Context, in ...alerting.EventInput) []int {
	tb.Helper()
	var ids []int
	_, err := dbtx.Run(ctx, c, func(c *ent.Client) error {
		evs, err := alerting.Report(ctx, c, in)
		for _, e := range evs {
			ids = append(ids, e.ID)
		}
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return ids
}

func rule(c *ent.Client, name string, kind eventrule.Kind) *ent.EventRuleCreate {
	return c.EventRule.Create().SetName(name).SetKind(kind)
}

// TestReportOwnNodeOnly: an agent reports events of its own node; one naming another node
// is refused and nothing of its batch is stored; every accepted batch has its outbox task.
func TestReportOwnNodeOnly(t *testing.T) {
	db, s := site(t, 2)
	c := db.Client
	mine, other := s.Nodes[0].ID, s.Nodes[1].ID
	ids := report(t, c, agent(mine), alerting.EventInput{NodeID: mine, CheckName: "disk", Status: event.StatusWarning, Output: "92% used\nmore"})
	ev := c.Event.GetX(sys(), ids[0])
	if ev.Output != "92% used" {
		t.Errorf("output %q: want the first line", ev.Output)
	}
	if n := c.OutboxTask.Query().Where(outboxtask.Kind(alerting.TypeEvents)).CountX(sys()); n != 1 {
		t.Errorf("%d event tasks, want 1", n)
	}
	_, err := dbtx.Run(agent(mine), c, func(c *ent.Client) error {
		_, err := alerting.Report(agent(mine), c, []alerting.EventInput{
			{NodeID: mine, CheckName: "disk", Status: event.StatusWarning},
			{NodeID: other, CheckName: "disk", Status: event.StatusCritical}})
		return err
	})
	if err == nil {
		t.Fatal("an agent reported an event of another node")
	}
	if n := c.Event.Query().CountX(sys()); n != 1 {
		t.Errorf("%d events stored, want 1 (the refused batch left nothing)", n)
	}
}

// TestRuleKinds runs the four kinds in the seed's order on events through the engine:
// Filter drops, Silence stores flagged with no action, explicit silences and maintenance
// silence too, Action raises (and a repeat counts on) one alert, and a SUCCESS resolves it.
func TestRuleKinds(t *testing.T) {
	db, s := site(t, 3)
	c := db.Client
	ctx := sys()
	n0, n1, n2 := s.Nodes[0], s.Nodes[1], s.Nodes[2]
	rule(c, "drop-debug", eventrule.KindFilter).SetCheckNamePattern("debug-*").SetPriority(500).SaveX(ctx)
	rule(c, "quiet-n1", eventrule.KindSilence).SetNodePattern(n1.Name).SaveX(ctx)
	rule(c, "alert", eventrule.KindAction).SetAction(eventrule.ActionCreateAlert).SetCheckNamePattern("*").SaveX(ctx)
	c.Maintenance.Create().SetTitle("swap disks").SetStatus("IN_PROGRESS").SetStartsAt(time.Now().Add(-time.Minute)).
		AddNodeIDs(n2.ID).SaveX(ctx)
	e := &alerting.Engine{Client: c, Log: quiet()}
	run := func(ids []int) {
		t.Helper()
		if err := e.ProcessEvents(ctx, ids); err != nil {
			t.Fatal(err)
		}
	}
	ids := report(t, c, ctx,
		alerting.EventInput{NodeID: n0.ID, CheckName: "debug-trace", Status: event.StatusCritical},
		alerting.EventInput{NodeID: n1.ID, CheckName: "disk", Status: event.StatusCritical},
		alerting.EventInput{NodeID: n2.ID, CheckName: "disk", Status: event.StatusCritical},
		alerting.EventInput{NodeID: n0.ID, CheckName: "disk", Status: event.StatusCritical, Output: "full"},
	)
	run(ids)
	run(ids) // a task run again changes nothing
	if ok, _ := c.Event.Query().Where(event.ID(ids[0])).Exist(ctx); ok {
		t.Error("the filtered event was kept")
	}
	for _, id := range ids[1:3] {
		ev := c.Event.GetX(ctx, id)
		if !ev.Silenced || ev.ProcessedAt == nil {
			t.Errorf("event %d (%s): silenced %v processed %v", id, ev.Outcome, ev.Silenced, ev.ProcessedAt)
		}
	}
	alerts := c.Alert.Query().AllX(ctx)
	if len(alerts) != 1 || alerts[0].Severity != alert.SeverityCritical || alerts[0].Occurrences != 1 {
		t.Fatalf("alerts %+v, want one CRITICAL for n0", alerts)
	}
	run(report(t, c, ctx, alerting.EventInput{NodeID: n0.ID, CheckName: "disk", Status: event.StatusCritical}))
	if a := c.Alert.GetX(ctx, alerts[0].ID); a.Occurrences != 2 || a.Status != alert.StatusOpen {
		t.Errorf("after a repeat: occurrences %d status %s, want 2 OPEN", a.Occurrences, a.Status)
	}
	// An explicit silence mutes n0 now.
	c.Silence.Create().SetNodePattern(n0.Name).SetEndsAt(time.Now().Add(time.Hour)).SetComment("reboot").SaveX(ctx)
	id := report(t, c, ctx, alerting.EventInput{NodeID: n0.ID, CheckName: "disk", Status: event.StatusCritical})[0]
	run([]int{id})
	if ev := c.Event.GetX(ctx, id); !ev.Silenced {
		t.Errorf("an event under a silence: %q", ev.Outcome)
	}
	c.Silence.Delete().ExecX(ctx)
	run(report(t, c, ctx, alerting.EventInput{NodeID: n0.ID, CheckName: "disk", Status: event.StatusSuccess}))
	if a := c.Alert.GetX(ctx, alerts[0].ID); a.Status != alert.StatusClosed || a.ClosedBy != "rule:alert" {
		t.Errorf("after the check recovered: %s closed by %q, want CLOSED by rule:alert", a.Status, a.ClosedBy)
	}
}

// TestConcurrentRepeatsOneAlert: identical events processed at the same time by separate
// workers give one alert counting both, never two: the unique partial index decides.
func TestConcurrentRepeatsOneAlert(t *testing.T) {
	db, s := site(t, 1)
	c := db.Client
	ctx := sys()
	rule(c, "alert", eventrule.KindAction).SetAction(eventrule.ActionCreateAlert).SaveX(ctx)
	for round := 0; round < 5; round++ {
		var ids []int
		for range 8 {
			ids = append(ids, report(t, c, ctx, alerting.EventInput{NodeID: s.Nodes[0].ID, CheckName: fmt.Sprintf("c%d", round),
				Status: event.StatusCritical})...)
		}
		var wg sync.WaitGroup
		errs := make(chan error, len(ids))
		for _, id := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- (&alerting.Engine{Client: c}).ProcessEvents(ctx, []int{id})
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		as := c.Alert.Query().Where(alert.NameHasPrefix(fmt.Sprintf("c%d ", round))).AllX(ctx)
		if len(as) != 1 || as[0].Occurrences != len(ids) {
			t.Fatalf("round %d: %d alerts (%v), want 1 with occurrences %d", round, len(as), as, len(ids))
		}
	}
	// And Raise itself, from two transactions at once.
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = dbtx.Run(ctx, c, func(c *ent.Client) error {
				_, _, err := alerting.Raise(ctx, c, alerting.AlertSpec{Name: "x", Severity: alert.SeverityWarning, Fingerprint: "fp-x"})
				return err
			})
		}()
	}
	wg.Wait()
	if as := c.Alert.Query().Where(alert.Fingerprint("fp-x")).AllX(ctx); len(as) != 1 || as[0].Occurrences != 2 {
		t.Errorf("two concurrent raises: %d alerts, want one with occurrences 2", len(as))
	}
	// createAlert twice with one fingerprint: one open alert counting two.
	fp := "fp-api"
	for range 2 {
		if _, err := alerting.Create(ctx, c, ent.CreateAlertInput{Name: "api", Severity: alert.SeverityWarning, Fingerprint: &fp}); err != nil {
			t.Fatal(err)
		}
	}
	if as := c.Alert.Query().Where(alert.Fingerprint(fp)).AllX(ctx); len(as) != 1 || as[0].Occurrences != 2 {
		t.Errorf("two createAlert calls: %d alerts, want one with occurrences 2", len(as))
	}
}

// TestAggregateOneHook: a burst of 1,000 events in one group (group-by rack) gives exactly
// one hook, counting them all, once the group is flushed; flushing again sends nothing.
func TestAggregateOneHook(t *testing.T) {
	db, s := site(t, 3)
	c := db.Client
	ctx := sys()
	r := rule(c, "by-rack", eventrule.KindAggregate).SetAction(eventrule.ActionCallHook).SetHookURL("http://127.0.0.1:9/hook").
		SetGroupBy([]string{"rack"}).SetAggregateWindowSeconds(30).SaveX(ctx)
	var in []alerting.EventInput
	for i := range 1000 {
		in = append(in, alerting.EventInput{NodeID: s.Nodes[i%3].ID, CheckName: "nic", Status: event.StatusCritical})
	}
	e := &alerting.Engine{Client: c}
	if err := e.ProcessEvents(ctx, report(t, c, ctx, in...)); err != nil {
		t.Fatal(err)
	}
	if n := c.OutboxTask.Query().Where(outboxtask.Kind(alerting.TypeGroup)).CountX(ctx); n != 1 {
		t.Fatalf("%d group flushes scheduled, want 1", n)
	}
	key := "rack=" + c.Rack.GetX(ctx, s.Racks[0].ID).Name
	for range 2 {
		if err := e.FlushGroup(ctx, r.ID, key); err != nil {
			t.Fatal(err)
		}
	}
	ds := c.HookDelivery.Query().AllX(ctx)
	if len(ds) != 1 {
		t.Fatalf("%d deliveries, want 1", len(ds))
	}
	var body alerting.HookBody
	if err := json.Unmarshal([]byte(ds[0].Payload), &body); err != nil || body.Count != 1000 || body.Group != key {
		t.Errorf("hook body %+v (%v), want count 1000 for group %s", body, err, key)
	}
}

// hookServer records the hooks it receives, checking their signature; it answers 500 to
// the first fail requests.
type hookServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []alerting.HookBody
	keys   map[string]int
	bad    int
	fail   int
}

func newHookServer(t *testing.T, secret string, fail int) *hookServer {
	h := &hookServer{keys: map[string]int{}, fail: fail}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.fail > 0 {
			h.fail--
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		if secret != "" && !hmac.Equal([]byte(r.Header.Get(alerting.HeaderSignature)), []byte(alerting.Sign(secret, b))) {
			h.bad++
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var body alerting.HookBody
		_ = json.Unmarshal(b, &body)
		h.keys[r.Header.Get(alerting.HeaderIdempotency)]++
		if h.keys[r.Header.Get(alerting.HeaderIdempotency)] == 1 {
			h.bodies = append(h.bodies, body)
		}
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hookServer) received() []alerting.HookBody {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]alerting.HookBody(nil), h.bodies...)
}

// pipeline runs what production runs on a Redis of the test's own: the outbox relay and
// an Asynq worker serving the engine. stop shuts the worker down.
func pipeline(t testing.TB, c *ent.Client, dialect string, rd asynq.RedisConnOpt) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	relay := outbox.NewRelay(c, rd, outbox.Config{Dialect: dialect, Poll: 20 * time.Millisecond, Options: alerting.TaskOptions})
	done := make(chan struct{})
	go func() { defer close(done); relay.Run(ctx) }()
	srv := worker(c, rd)
	return func() { srv.Shutdown(); cancel(); <-done }
}

func worker(c *ent.Client, rd asynq.RedisConnOpt) *asynq.Server {
	srv := asynq.NewServer(rd, asynq.Config{Concurrency: 4, Queues: map[string]int{alerting.Queue: 1},
		Logger: nopLogger{}, RetryDelayFunc: func(int, error, *asynq.Task) time.Duration { return 100 * time.Millisecond },
		DelayedTaskCheckInterval: 100 * time.Millisecond, TaskCheckInterval: 100 * time.Millisecond /* as worker.TaskCheckInterval */, ShutdownTimeout: time.Millisecond})
	mux := asynq.NewServeMux()
	mux.Use(outbox.Acknowledge(c, nil))
	(&alerting.Engine{Client: c, Log: quiet(), HTTP: alerting.HookClient(testEgress()), Secrets: testKeys()}).Register(mux)
	if err := srv.Start(mux); err != nil {
		panic(err)
	}
	return srv
}

type nopLogger struct{}

func (nopLogger) Debug(...any) {}
func (nopLogger) Info(...any)  {}
func (nopLogger) Warn(...any)  {}
func (nopLogger) Error(...any) {}
func (nopLogger) Fatal(...any) {}

func privateRedis(t testing.TB) asynq.RedisConnOpt {
	opts, err := redis.ParseURL(testdb.PrivateRedis(t))
	if err != nil {
		t.Fatal(err)
	}
	return asynq.RedisClientOpt{Addr: opts.Addr, DB: opts.DB}
}

// TestNodeDownAlertAndHook is the path end to end on PostgreSQL and Redis: the node
// monitor marks a silent node DOWN → its event → rules in the worker → an alert for
// node-* and a signed hook to an HTTP server (which fails twice first: retried, with the
// same idempotency key, every attempt kept); the node's next heartbeat makes it READY →
// a SUCCESS event → the alert is resolved and a recovery hook follows.
func TestNodeDownAlertAndHook(t *testing.T) {
	db, s := site(t, 2)
	c := db.Client
	ctx := sys()
	hooks := newHookServer(t, "s3cret", 2)
	rule(c, "nodes-alert", eventrule.KindAction).SetAction(eventrule.ActionCreateAlert).SetNodePattern("*").
		SetCheckNamePattern(nodemonitor.EventCheck).SaveX(ctx)
	rule(c, "nodes-hook", eventrule.KindAction).SetAction(eventrule.ActionCallHook).SetHookURL(hooks.URL).
		SetHookSecret("s3cret").SetCheckNamePattern(nodemonitor.EventCheck).SetReissueSeconds(3600).SaveX(ctx)
	stop := pipeline(t, c, db.Dialect, privateRedis(t))
	defer stop()

	now := time.Now()
	down := s.Nodes[1]
	c.ComputeNode.UpdateOneID(s.Nodes[0].ID).SetLastHeartbeatAt(now).ExecX(ctx)
	c.ComputeNode.UpdateOneID(down.ID).SetLastHeartbeatAt(now.Add(-10 * time.Minute)).ExecX(ctx)
	m := nodemonitor.New(c, nodemonitor.Config{Now: func() time.Time { return now }, Placer: placement.New(placement.Config{})}, quiet())
	if r, err := m.Tick(context.Background()); err != nil || r.Down != 1 {
		t.Fatalf("tick: %+v %v", r, err)
	}
	var raised *ent.Alert
	poll.Until(t, 20*time.Second, func() error {
		a, err := c.Alert.Query().Where(alert.HasNodeWith()).Only(ctx)
		if err != nil {
			return err
		}
		raised = a
		if len(hooks.received()) < 1 {
			return fmt.Errorf("no hook yet")
		}
		// The hook server answers before the worker records its answer.
		if d, err := c.HookDelivery.Query().Only(ctx); err != nil || d.Status == hookdelivery.StatusPending {
			return fmt.Errorf("delivery not recorded yet (%v)", err)
		}
		return nil
	})
	if raised.Severity != alert.SeverityCritical || c.Alert.QueryNode(raised).OnlyIDX(ctx) != down.ID {
		t.Errorf("alert %+v, want CRITICAL on node %s", raised, down.Name)
	}
	got := hooks.received()[0]
	if got.Event.Node != down.Name || got.Recovery || got.Alert == nil || got.Alert.ID != raised.ID {
		t.Errorf("hook %+v", got)
	}
	d := c.HookDelivery.Query().OnlyX(ctx)
	if d.Status != hookdelivery.StatusDelivered || d.Attempts != 3 || d.ResponseStatus != 200 {
		t.Errorf("delivery: %s after %d attempts (status %d), want DELIVERED after 3", d.Status, d.Attempts, d.ResponseStatus)
	}

	// The node's agent comes back: its heartbeat makes it READY and files the SUCCESS.
	if _, err := dbtx.Run(agent(down.ID), c, func(c *ent.Client) error {
		_, _, err := nodestatus.Apply(agent(down.ID), c, nodestatus.Report{NodeID: down.ID, Healthy: true})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 20*time.Second, func() error {
		if a := c.Alert.GetX(ctx, raised.ID); a.Status != alert.StatusClosed {
			return fmt.Errorf("alert still %s", a.Status)
		}
		if n := len(hooks.received()); n < 2 {
			return fmt.Errorf("%d hooks", n)
		}
		return nil
	})
	if rec := hooks.received()[1]; !rec.Recovery || rec.Event.Status != "SUCCESS" {
		t.Errorf("recovery hook %+v", rec)
	}
	if hooks.bad != 0 {
		t.Errorf("%d hooks with a bad signature", hooks.bad)
	}
}

// TestWorkerKilledLosesNothing: a burst of events, each hooked, while the worker is shut
// down abruptly (1 ms grace) twice in the middle and started again: in the end every event
// is processed and every hook delivered, duplicates (if any) only under one idempotency key.
func TestWorkerKilledLosesNothing(t *testing.T) {
	db, s := site(t, 2)
	c := db.Client
	ctx := sys()
	hooks := newHookServer(t, "", 0)
	rule(c, "hook-all", eventrule.KindAction).SetAction(eventrule.ActionCallHook).SetHookURL(hooks.URL).SaveX(ctx)
	rd := privateRedis(t)
	rctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	relay := outbox.NewRelay(c, rd, outbox.Config{Dialect: db.Dialect, Poll: 20 * time.Millisecond, Verify: time.Second,
		Options: alerting.TaskOptions})
	go relay.Run(rctx)

	const batches, per = 20, 10
	srv := worker(c, rd)
	for b := range batches {
		var in []alerting.EventInput
		for i := range per {
			in = append(in, alerting.EventInput{NodeID: s.Nodes[i%2].ID, CheckName: fmt.Sprintf("b%d-%d", b, i), Status: event.StatusCritical})
		}
		report(t, c, ctx, in...)
		if b == 7 || b == 14 {
			srv.Shutdown() // killed mid-burst
			srv = worker(c, rd)
		}
	}
	defer srv.Shutdown()
	poll.Until(t, 60*time.Second, func() error {
		if n := len(hooks.received()); n != batches*per {
			return fmt.Errorf("%d of %d hooks", n, batches*per)
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
	t.Logf("%d hooks, %d redelivered under the same idempotency key", len(hooks.received()), dup)
}
