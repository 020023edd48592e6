package nodemonitor_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/virtflow/virtflow/controllers/nodemonitor"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/auditlog"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/event"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func openDB(t *testing.T) *ent.Client {
	t.Helper()
	db, err := infra.OpenDatabase(context.Background(), testdb.DSN(t), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db.Client
}

// TestMonitorThresholds: with an injected clock, a READY node silent for more than 50 s is
// NOT_READY, one silent for more than 5 minutes DOWN, each with a reason and an Event; a
// node that asked for auto-cordon is cordoned after its interval; a node that never sent a
// heartbeat and a fresh one are left alone, and so are the VMs of quiet nodes. A second
// tick at the same time changes nothing.
func TestMonitorThresholds(t *testing.T) {
	c := openDB(t)
	ctx := placementtest.Ctx()
	s, err := placementtest.Build(ctx, c, placementtest.Spec{Racks: 1, HostsPerRack: 5, CPU: 8, MemoryMB: 8192, DiskGB: 100, Cores: 4})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	fresh, silent, gone, never, cordon := s.Nodes[0].ID, s.Nodes[1].ID, s.Nodes[2].ID, s.Nodes[3].ID, s.Nodes[4].ID
	beat := func(id int, ago time.Duration) {
		c.ComputeNode.UpdateOneID(id).SetLastHeartbeatAt(now.Add(-ago)).ExecX(ctx)
	}
	beat(fresh, 10*time.Second)
	beat(silent, 60*time.Second)
	beat(gone, 6*time.Minute)
	beat(cordon, 3*time.Minute)
	c.ComputeNode.UpdateOneID(cordon).SetAutoCordon(true).SetAutoCordonIntervalSeconds(120).ExecX(ctx)
	f, _ := s.Flavor(ctx, 1, 512, 10, false)
	vm := c.VirtualMachine.Create().SetName("still-running").SetTenantID(s.Tenant).SetRegionID(s.Region).
		SetFlavorID(f.ID).SetNodeID(silent).SetClusterID(s.Cluster).SetStatus("ACTIVE").SaveX(ctx)

	clock := now
	m := nodemonitor.New(c, nodemonitor.Config{Now: func() time.Time { return clock }}, quiet())
	r, err := m.Tick(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r.NotReady != 2 || r.Down != 1 || r.Cordoned != 1 {
		t.Fatalf("tick = %+v, want 2 NOT_READY, 1 DOWN, 1 cordoned", r)
	}
	want := map[int]computenode.Status{fresh: computenode.StatusReady, silent: computenode.StatusNotReady,
		gone: computenode.StatusDown, never: computenode.StatusReady, cordon: computenode.StatusNotReady}
	for id, st := range want {
		n := c.ComputeNode.GetX(ctx, id)
		if n.Status != st {
			t.Errorf("node %s: %s, want %s", n.Name, n.Status, st)
		}
		if st != computenode.StatusReady && !strings.Contains(n.StatusReason, "no heartbeat for") {
			t.Errorf("node %s: statusReason %q", n.Name, n.StatusReason)
		}
		if n.Schedulable != (id != cordon) {
			t.Errorf("node %s: schedulable %v", n.Name, n.Schedulable)
		}
	}
	if n := c.ComputeNode.GetX(ctx, cordon); !strings.HasPrefix(n.CordonReason, "auto-cordoned") {
		t.Errorf("auto-cordon reason %q", n.CordonReason)
	}
	events := func(id int, st event.Status) int {
		return c.Event.Query().Where(event.HasNodeWith(computenode.ID(id)), event.CheckName(nodemonitor.EventCheck), event.StatusEQ(st)).CountX(ctx)
	}
	if events(silent, event.StatusWarning) != 1 || events(gone, event.StatusCritical) != 1 || events(fresh, event.StatusWarning) != 0 {
		t.Errorf("events: silent %d, gone %d, fresh %d", events(silent, event.StatusWarning), events(gone, event.StatusCritical), events(fresh, event.StatusWarning))
	}
	if got := c.VirtualMachine.Query().WithNode().Where(virtualmachine.ID(vm.ID)).OnlyX(ctx); got.ID != vm.ID || got.Edges.Node.ID != silent || got.Status != "ACTIVE" {
		t.Errorf("VM of the quiet node changed: node %d status %s", got.Edges.Node.ID, got.Status)
	}

	// Each change has its audit row, as system:nodemonitor, with the node before and after.
	for _, w := range []struct {
		node                  int
		action, before, after string
	}{
		{silent, "markNodeNotReady", `"status": "READY"`, `"status": "NOT_READY"`},
		{gone, "markNodeDown", `"status": "READY"`, `"status": "DOWN"`},
		{cordon, "markNodeNotReady", `"status": "READY"`, `"status": "NOT_READY"`},
		{cordon, "autoCordonNode", `"schedulable": true`, `"cordon_reason": "auto-cordoned`},
	} { // as PostgreSQL's jsonb prints them
		l, err := c.AuditLog.Query().Where(auditlog.Actor("system:nodemonitor"), auditlog.Action(w.action),
			auditlog.ObjectType("ComputeNode"), auditlog.ObjectID(w.node)).Only(ctx)
		if err != nil {
			t.Errorf("audit row %s of node %d: %v", w.action, w.node, err)
			continue
		}
		if !strings.Contains(string(l.Before), w.before) || !strings.Contains(string(l.After), w.after) {
			t.Errorf("audit row %s of node %d: before %s after %s", w.action, w.node, l.Before, l.After)
		}
	}
	if n := c.AuditLog.Query().Where(auditlog.ObjectID(fresh)).CountX(ctx); n != 0 {
		t.Errorf("%d audit rows for the node that changed nothing", n)
	}

	// Nothing more to do at the same time.
	if r, err := m.Tick(context.Background()); err != nil || r != (nodemonitor.Result{}) {
		t.Fatalf("second tick = %+v, %v; want nothing", r, err)
	}
	// Five minutes later every node that beat before is DOWN (the fresh one has been silent
	// for 5m10s by then); the one that never beat is still left alone.
	clock = now.Add(5 * time.Minute)
	if r, err = m.Tick(context.Background()); err != nil || r.Down != 3 {
		t.Fatalf("tick five minutes later = %+v, %v; want 3 DOWN", r, err)
	}
	for _, id := range []int{fresh, silent, cordon} {
		if st := c.ComputeNode.GetX(ctx, id).Status; st != computenode.StatusDown {
			t.Errorf("node %d five minutes later: %s, want DOWN", id, st)
		}
	}
	if st := c.ComputeNode.GetX(ctx, never).Status; st != computenode.StatusReady {
		t.Errorf("node without heartbeats: %s, want READY (left alone)", st)
	}
}
