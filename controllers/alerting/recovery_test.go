package alerting_test

import (
	"testing"

	"github.com/virtflow/virtflow/controllers/alerting"
	"github.com/virtflow/virtflow/ent/alert"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/event"
	"github.com/virtflow/virtflow/ent/eventrule"
	"github.com/virtflow/virtflow/ent/hookdelivery"
)

// TestFilterKeepsRecoveries: a FILTER dropping SUCCESS events (the demo's) drops the
// routine ones but not the SUCCESS that recovers a failure: the alert resolves and the
// recovery hook is delivered to the receiver, marked recovery.
func TestFilterKeepsRecoveries(t *testing.T) {
	db, s := site(t, 1)
	c, ctx := db.Client, sys()
	hs := newHookServer(t, "", 0)
	rule(c, "drop-successes", eventrule.KindFilter).SetStatusMatch(eventrule.StatusMatchSuccess).SetPriority(10).SaveX(ctx)
	rule(c, "alert", eventrule.KindAction).SetAction(eventrule.ActionCreateAlert).SaveX(ctx)
	rule(c, "hook", eventrule.KindAction).SetAction(eventrule.ActionCallHook).SetHookURL(hs.URL).SaveX(ctx)
	e := &alerting.Engine{Client: c, Log: quiet(), HTTP: alerting.HookClient(testEgress())}
	run := func(st event.Status) int {
		t.Helper()
		ids := report(t, c, ctx, alerting.EventInput{NodeID: s.Nodes[0].ID, CheckName: "disk", Status: st})
		if err := e.ProcessEvents(ctx, ids); err != nil {
			t.Fatal(err)
		}
		return ids[0]
	}
	routine := run(event.StatusSuccess)
	if ok := c.Event.Query().Where(event.ID(routine)).ExistX(ctx); ok {
		t.Error("a SUCCESS with nothing to recover was kept")
	}
	run(event.StatusCritical)
	a := c.Alert.Query().OnlyX(ctx)
	recovery := run(event.StatusSuccess)
	if ok := c.Event.Query().Where(event.ID(recovery)).ExistX(ctx); !ok {
		t.Fatal("the FILTER dropped the SUCCESS that recovers the alert")
	}
	if a = c.Alert.GetX(ctx, a.ID); a.Status != alert.StatusClosed {
		t.Errorf("alert %s after the recovery, want CLOSED", a.Status)
	}
	for _, d := range c.HookDelivery.Query().Where(hookdelivery.StatusEQ(hookdelivery.StatusPending)).AllX(ctx) {
		if err := deliverNow(e, d.ID); err != nil {
			t.Fatal(err)
		}
	}
	got := hs.received()
	if len(got) != 2 || got[0].Recovery || !got[1].Recovery {
		t.Fatalf("hooks received %+v, want the failure then its recovery", got)
	}
	// The next SUCCESS has nothing left to recover: dropped again.
	if again := run(event.StatusSuccess); c.Event.Query().Where(event.ID(again)).ExistX(ctx) {
		t.Error("a SUCCESS after the recovery was kept")
	}
}

// TestOccurrencesPerEvent: an event that two CREATE_ALERT rules match counts once on the
// alert; occurrences counts events.
func TestOccurrencesPerEvent(t *testing.T) {
	db, s := site(t, 1)
	c, ctx := db.Client, sys()
	rule(c, "alert-all", eventrule.KindAction).SetAction(eventrule.ActionCreateAlert).SaveX(ctx)
	rule(c, "alert-critical", eventrule.KindAction).SetAction(eventrule.ActionCreateAlert).
		SetStatusMatch(eventrule.StatusMatchCritical).SaveX(ctx)
	e := &alerting.Engine{Client: c, Log: quiet()}
	for i := 1; i <= 3; i++ {
		ids := report(t, c, ctx, alerting.EventInput{NodeID: s.Nodes[0].ID, CheckName: "disk", Status: event.StatusCritical})
		if err := e.ProcessEvents(ctx, ids); err != nil {
			t.Fatal(err)
		}
		if a := c.Alert.Query().OnlyX(ctx); a.Occurrences != i {
			t.Fatalf("after %d events: occurrences %d, want %d", i, a.Occurrences, i)
		}
	}
	// Two events in one batch count two.
	ids := report(t, c, ctx, alerting.EventInput{NodeID: s.Nodes[0].ID, CheckName: "disk", Status: event.StatusCritical},
		alerting.EventInput{NodeID: s.Nodes[0].ID, CheckName: "disk", Status: event.StatusCritical})
	if err := e.ProcessEvents(ctx, ids); err != nil {
		t.Fatal(err)
	}
	if a := c.Alert.Query().OnlyX(ctx); a.Occurrences != 5 {
		t.Fatalf("after 5 events: occurrences %d, want 5", a.Occurrences)
	}
}

// TestChecksShareNodes: two checks may name the same node and the same cluster (a node runs
// every check naming it); the same check twice is still refused by its unique name.
func TestChecksShareNodes(t *testing.T) {
	db, s := site(t, 1)
	c, ctx := db.Client, sys()
	n := s.Nodes[0]
	cl := c.ComputeNode.Query().Where(computenode.ID(n.ID)).QueryCluster().OnlyX(ctx)
	for _, name := range []string{"disk", "ntp"} {
		if _, err := c.Check.Create().SetName(name).SetCommand("/bin/true").AddNodeIDs(n.ID).AddClusterIDs(cl.ID).Save(ctx); err != nil {
			t.Fatalf("check %s naming node %s and its cluster: %v", name, n.Name, err)
		}
	}
	got, err := alerting.ChecksForNode(ctx, c, n.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "disk" || got[1].Name != "ntp" {
		t.Errorf("checks for the node: %v, want disk and ntp", got)
	}
	if k := c.Check.Query().QueryNodes().CountX(ctx); k != 1 {
		t.Errorf("the checks name %d distinct nodes, want 1", k)
	}
	if _, err := c.Check.Create().SetName("disk").SetCommand("/bin/true").AddNodeIDs(n.ID).Save(ctx); err == nil {
		t.Error("a second check named disk was stored")
	}
}
