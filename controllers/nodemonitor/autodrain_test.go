package nodemonitor_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/virtflow/virtflow/controllers/nodemonitor"
	"github.com/virtflow/virtflow/domain/placement"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/event"
	"github.com/virtflow/virtflow/ent/maintenance"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// TestAutoDrain: of two nodes silent for three minutes, the one with autoDrain (interval
// 2 minutes) is drained by the monitor — cordoned, its VM moved to the healthy node, a
// Maintenance record and an Event — while the VM of the other quiet node stays put. The
// drain happens once: later ticks leave the drained node to the operator.
func TestAutoDrain(t *testing.T) {
	c := openDB(t)
	ctx := placementtest.Ctx()
	s, err := placementtest.Build(ctx, c, placementtest.Spec{Racks: 1, HostsPerRack: 3, CPU: 8, MemoryMB: 8192, DiskGB: 100, Cores: 4})
	if err != nil {
		t.Fatal(err)
	}
	auto, manual, spare := s.Nodes[0].ID, s.Nodes[1].ID, s.Nodes[2].ID
	f, err := s.Flavor(ctx, 1, 512, 10, false)
	if err != nil {
		t.Fatal(err)
	}
	p := placement.New(placement.Config{})
	// place puts a VM on node by leaving only that node schedulable.
	place := func(node int, name string) int {
		t.Helper()
		for _, n := range s.Nodes {
			c.ComputeNode.UpdateOneID(n.ID).SetSchedulable(n.ID == node).ExecX(ctx)
		}
		tx, err := c.Tx(ctx)
		if err != nil {
			t.Fatal(err)
		}
		vm, err := p.CreateVM(ctx, tx.Client(), ent.CreateVirtualMachineInput{Name: name, TenantID: s.Tenant, RegionID: s.Region, FlavorID: f.ID})
		if err != nil {
			_ = tx.Rollback()
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		return vm.ID
	}
	onAuto, onManual := place(auto, "on-auto"), place(manual, "on-manual")
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, n := range s.Nodes {
		c.ComputeNode.UpdateOneID(n.ID).SetSchedulable(true).SetLastHeartbeatAt(now.Add(-3 * time.Minute)).ExecX(ctx)
	}
	c.ComputeNode.UpdateOneID(spare).SetLastHeartbeatAt(now).ExecX(ctx)
	c.ComputeNode.UpdateOneID(auto).SetAutoDrain(true).SetAutoDrainIntervalSeconds(120).ExecX(ctx)

	m := nodemonitor.New(c, nodemonitor.Config{Now: func() time.Time { return now }, Placer: p}, quiet())
	r, err := m.Tick(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r.Drained != 1 {
		t.Fatalf("tick = %+v, want 1 drained", r)
	}
	for _, id := range []int{auto, manual} {
		if st := c.ComputeNode.GetX(ctx, id).Status; st != computenode.StatusNotReady {
			t.Errorf("quiet node %d is %s, want NOT_READY", id, st)
		}
	}
	n := c.ComputeNode.GetX(ctx, auto)
	// Its VM was never realized on a hypervisor, so nothing is left to wait for: the drain
	// is over at once (DRAINED); with realized VMs it would be DRAINING until they are gone.
	if n.Schedulable || n.DrainState == nil || *n.DrainState != computenode.DrainStateDrained {
		t.Fatalf("auto-drain node: schedulable %v, drain state %v; want cordoned and drained", n.Schedulable, n.DrainState)
	}
	nodeOf := func(vm int) int {
		return c.VirtualMachine.Query().Where(virtualmachine.ID(vm)).QueryNode().OnlyIDX(ctx)
	}
	if got := nodeOf(onAuto); got != spare {
		t.Errorf("VM of the auto-drain node is on node %d, want the healthy node %d", got, spare)
	}
	if got := nodeOf(onManual); got != manual {
		t.Errorf("VM of the quiet node without autoDrain moved to node %d", got)
	}
	if k := c.Maintenance.Query().Where(maintenance.HasNodesWith(computenode.ID(auto)), maintenance.Automatic(true)).CountX(ctx); k != 1 {
		t.Errorf("%d automatic maintenance records for the drained node, want 1", k)
	}
	evs := c.Event.Query().Where(event.HasNodeWith(computenode.ID(auto)), event.CheckName(nodemonitor.EventCheck)).AllX(ctx)
	drained := 0
	for _, e := range evs {
		if strings.Contains(e.Output, "auto-drained") {
			drained++
		}
	}
	if drained != 1 {
		t.Errorf("%d auto-drain events, want 1", drained)
	}

	now = now.Add(time.Hour)
	if r, err := m.Tick(context.Background()); err != nil || r.Drained != 0 {
		t.Fatalf("tick an hour later = %+v, %v; want no second drain", r, err)
	}
}
