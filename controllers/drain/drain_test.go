package drain_test

import (
	"context"
	"testing"
	"time"

	"github.com/virtflow/virtflow/controllers/drain"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/placement"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/maintenance"
	"github.com/virtflow/virtflow/ent/quota"
	"github.com/virtflow/virtflow/ent/regionservice"
	"github.com/virtflow/virtflow/ent/tenant"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// bed is a three-node site whose VMs were placed on node 0 (the others cordoned meanwhile)
// and realized there: each has a RUNNING assignment its agent applied.
type bed struct {
	c    *ent.Client
	s    *placementtest.Site
	p    *placement.Placer
	node int // node 0, the one drained
	vms  []*ent.VirtualMachine
	old  map[int]int // VM id -> its assignment on node 0
}

func newBed(t *testing.T, vms int, quotaVCPUs int) *bed {
	t.Helper()
	db, err := infra.OpenDatabase(context.Background(), testdb.DSN(t), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	c := db.Client
	ctx := placementtest.Ctx()
	s, err := placementtest.Build(ctx, c, placementtest.Spec{Racks: 1, HostsPerRack: 3, CPU: 16, MemoryMB: 65536, DiskGB: 1000, Cores: 8})
	if err != nil {
		t.Fatal(err)
	}
	if quotaVCPUs > 0 {
		if _, err := s.Quota(ctx, s.Tenant, quotaVCPUs, 0); err != nil {
			t.Fatal(err)
		}
	}
	f, err := s.Flavor(ctx, 1, 512, 10, false)
	if err != nil {
		t.Fatal(err)
	}
	b := &bed{c: c, s: s, p: placement.New(placement.Config{}), node: s.Nodes[0].ID, old: map[int]int{}}
	c.ComputeNode.Update().Where(computenode.IDNEQ(b.node)).SetSchedulable(false).ExecX(ctx)
	for i := range vms {
		vm, err := b.p.CreateVM(ctx, c, ent.CreateVirtualMachineInput{Name: s.Prefix + "-vm" + string(rune('a'+i)),
			TenantID: s.Tenant, RegionID: s.Region, FlavorID: f.ID})
		if err != nil {
			t.Fatal(err)
		}
		c.VirtualMachine.UpdateOneID(vm.ID).SetStatus(virtualmachine.StatusActive).ExecX(ctx)
		a := c.Assignment.Create().SetNodeID(b.node).SetVirtualMachineID(vm.ID).SetStatus(assignment.StatusApplied).
			SetObservedState("running").SaveX(ctx)
		b.vms = append(b.vms, vm)
		b.old[vm.ID] = a.ID
	}
	c.ComputeNode.Update().Where(computenode.IDNEQ(b.node)).SetSchedulable(true).ExecX(ctx)
	return b
}

// drain runs drain.Drain in a transaction of its own, as an operator would through drainNode.
func (b *bed) drain(t *testing.T, force bool) (*drain.Report, error) {
	t.Helper()
	ctx := placementtest.Ctx()
	tx, err := b.c.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := drain.Drain(ctx, tx.Client(), b.p, b.node, time.Hour, force, time.Now())
	if err != nil {
		_ = tx.Rollback()
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return rep, nil
}

func (b *bed) progress(t *testing.T) {
	t.Helper()
	if _, err := drain.Progress(context.Background(), b.c, time.Now()); err != nil {
		t.Fatal(err)
	}
}

// assignedElsewhere counts the VM's assignments on nodes other than node 0.
func (b *bed) assignedElsewhere(t *testing.T, vm int) []*ent.Assignment {
	t.Helper()
	return b.c.Assignment.Query().Where(assignment.HasVirtualMachineWith(virtualmachine.ID(vm)),
		assignment.HasNodeWith(computenode.IDNEQ(b.node))).AllX(placementtest.Ctx())
}

func (b *bed) drainState(t *testing.T) computenode.DrainState {
	t.Helper()
	n := b.c.ComputeNode.GetX(placementtest.Ctx(), b.node)
	if n.DrainState == nil {
		return ""
	}
	return *n.DrainState
}

// TestColdMove: a drain never asks for a second copy while the first may run. Drain only
// retires the old assignments (desired ABSENT, carrying the VM id for the old node's agent);
// nothing is assigned on the new node until the old node's agent confirmed each domain gone;
// then Progress assigns it there, and once every VM is assigned on its new node the drain is
// DRAINED and its maintenance closed.
func TestColdMove(t *testing.T) {
	b := newBed(t, 3, 0)
	ctx := placementtest.Ctx()
	rep, err := b.drain(t, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Moving) != 3 || len(rep.Unmovable) != 0 {
		t.Fatalf("report: %d moving, %d unmovable; want 3 and 0", len(rep.Moving), len(rep.Unmovable))
	}
	for _, vm := range b.vms {
		old := b.c.Assignment.GetX(ctx, b.old[vm.ID])
		if old.DesiredState != assignment.DesiredStateAbsent || old.Status != assignment.StatusPending {
			t.Errorf("VM %s: old assignment %s/%s, want ABSENT/PENDING", vm.Name, old.DesiredState, old.Status)
		}
		if old.VMID == nil || *old.VMID != vm.ID {
			t.Errorf("VM %s: old assignment vmID %v, want %d", vm.Name, old.VMID, vm.ID)
		}
		if got := b.assignedElsewhere(t, vm.ID); len(got) != 0 {
			t.Errorf("VM %s assigned on its new node before its old copy is gone: %d assignment(s)", vm.Name, len(got))
		}
	}
	b.progress(t)
	if st := b.drainState(t); st != computenode.DrainStateDraining {
		t.Fatalf("drain with old copies still there: %s, want DRAINING", st)
	}
	if got := b.assignedElsewhere(t, b.vms[0].ID); len(got) != 0 {
		t.Fatalf("Progress assigned VM %s elsewhere before its old copy is gone", b.vms[0].Name)
	}

	// The agent removes the first VM's domain: only that one is recreated.
	b.c.Assignment.UpdateOneID(b.old[b.vms[0].ID]).SetStatus(assignment.StatusApplied).SetObservedState("absent").ExecX(ctx)
	b.progress(t)
	got := b.assignedElsewhere(t, b.vms[0].ID)
	if len(got) != 1 || got[0].DesiredState != assignment.DesiredStateRunning || got[0].Generation <= 2 {
		t.Fatalf("VM %s after its old copy went: %+v, want one RUNNING assignment above generation 2", b.vms[0].Name, got)
	}
	if len(b.assignedElsewhere(t, b.vms[1].ID)) != 0 || b.drainState(t) != computenode.DrainStateDraining {
		t.Fatalf("the other VMs must still wait")
	}
	for _, vm := range b.vms[1:] {
		b.c.Assignment.UpdateOneID(b.old[vm.ID]).SetStatus(assignment.StatusApplied).SetObservedState("absent").ExecX(ctx)
	}
	b.progress(t)
	if st := b.drainState(t); st != computenode.DrainStateDrained {
		t.Fatalf("after every old copy went: %s, want DRAINED", st)
	}
	for _, vm := range b.vms {
		if n := len(b.assignedElsewhere(t, vm.ID)); n != 1 {
			t.Errorf("VM %s: %d assignments on other nodes, want 1", vm.Name, n)
		}
	}
	if n := b.c.Assignment.Query().Where(assignment.HasNodeWith(computenode.ID(b.node))).CountX(ctx); n != 0 {
		t.Errorf("%d assignments left on the drained node, want 0", n)
	}
	if m := b.c.Maintenance.GetX(ctx, rep.Maintenance.ID); m.Status != maintenance.StatusClosed {
		t.Errorf("maintenance %s, want CLOSED", m.Status)
	}
}

// TestDrainIgnoresQuota: a tenant at its vCPU quota does not block the drain, and moving
// its VMs leaves its usage where it was.
func TestDrainIgnoresQuota(t *testing.T) {
	b := newBed(t, 2, 2) // the quota is full: 2 of 2 vCPUs used
	ctx := placementtest.Ctx()
	q := b.c.Quota.Query().Where(quota.HasTenantWith(tenant.ID(b.s.Tenant))).OnlyX(ctx)
	if q.UsedVcpus != 2 {
		t.Fatalf("quota used %d vCPUs before the drain, want 2", q.UsedVcpus)
	}
	rep, err := b.drain(t, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Moving) != 2 || len(rep.Unmovable) != 0 {
		t.Fatalf("report: %d moving, %d unmovable (%+v); want 2 and 0", len(rep.Moving), len(rep.Unmovable), rep.Unmovable)
	}
	if q := b.c.Quota.GetX(ctx, q.ID); q.UsedVcpus != 2 {
		t.Errorf("quota used %d vCPUs after the moves, want still 2", q.UsedVcpus)
	}
	if n := b.c.ComputeNode.GetX(ctx, b.node); n.CPUAllocated != 0 {
		t.Errorf("drained node still has %d vCPUs allocated", n.CPUAllocated)
	}
}

// TestSecondDrainReturnsRunning: drainNode on a draining node answers with the running
// drain: the same maintenance record, no second one, the same deadline.
func TestSecondDrainReturnsRunning(t *testing.T) {
	b := newBed(t, 2, 0)
	ctx := placementtest.Ctx()
	first, err := b.drain(t, false)
	if err != nil {
		t.Fatal(err)
	}
	second, err := b.drain(t, false)
	if err != nil {
		t.Fatalf("second drain: %v", err)
	}
	if second.Maintenance == nil || second.Maintenance.ID != first.Maintenance.ID {
		t.Fatalf("second drain's maintenance %v, want %d", second.Maintenance, first.Maintenance.ID)
	}
	if len(second.Moving) != 2 {
		t.Errorf("second drain reports %d moving, want 2", len(second.Moving))
	}
	if n := b.c.Maintenance.Query().Where(maintenance.HasNodesWith(computenode.ID(b.node))).CountX(ctx); n != 1 {
		t.Errorf("%d maintenance records for the node, want 1", n)
	}
	if !second.Node.DrainDeadline.Equal(*first.Node.DrainDeadline) {
		t.Errorf("deadline changed from %v to %v", first.Node.DrainDeadline, second.Node.DrainDeadline)
	}
}

// TestSilentNodeNeedsForce: a node that does not report cannot confirm its VMs stopped:
// draining it without force is VALIDATION on force and changes nothing; with force the VMs
// are assigned elsewhere at once, the drain is DRAINED, and the retired assignments stay for
// the node's agent to remove the old copies should the node return.
func TestSilentNodeNeedsForce(t *testing.T) {
	b := newBed(t, 2, 0)
	ctx := placementtest.Ctx()
	b.c.ComputeNode.UpdateOneID(b.node).SetStatus(computenode.StatusDown).SetLastHeartbeatAt(time.Now().Add(-time.Hour)).ExecX(ctx)
	_, err := b.drain(t, false)
	if e, ok := apierr.As(err); !ok || e.Code != apierr.CodeValidation || e.Field != "force" {
		t.Fatalf("drain of a DOWN node without force: %v, want VALIDATION on force", err)
	}
	if st := b.drainState(t); st != "" {
		t.Fatalf("refused drain left drain state %s", st)
	}
	if _, err := b.drain(t, true); err != nil {
		t.Fatal(err)
	}
	if st := b.drainState(t); st != computenode.DrainStateDrained {
		t.Fatalf("forced drain: %s, want DRAINED", st)
	}
	for _, vm := range b.vms {
		if n := len(b.assignedElsewhere(t, vm.ID)); n != 1 {
			t.Errorf("VM %s: %d assignments elsewhere, want 1", vm.Name, n)
		}
		old := b.c.Assignment.GetX(ctx, b.old[vm.ID])
		if old.DesiredState != assignment.DesiredStateAbsent || old.Status == assignment.StatusApplied {
			t.Errorf("VM %s: old assignment %s/%s, want ABSENT still pending for the node's agent", vm.Name, old.DesiredState, old.Status)
		}
	}
}

// TestDrainKeepsReplicasInTheirCluster: a drain moves a region service's replica only
// within the service's cluster (a service never spans two clusters): with no room left
// there the replica is listed up front as unmovable (drainUnmovable), although another
// cluster has room, and the drain ends FAILED at once instead of at its deadline.
func TestDrainKeepsReplicasInTheirCluster(t *testing.T) {
	db, err := infra.OpenDatabase(context.Background(), testdb.DSN(t), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	c := db.Client
	ctx := placementtest.Ctx()
	// The service's cluster: two nodes with room for one replica each.
	s, err := placementtest.Build(ctx, c, placementtest.Spec{Racks: 1, HostsPerRack: 2, CPU: 2, MemoryMB: 4096, DiskGB: 100, Cores: 2})
	if err != nil {
		t.Fatal(err)
	}
	c.Cluster.UpdateOneID(s.Cluster).SetWeight(100).ExecX(ctx)
	other, err := s.AddCluster(ctx, "other", 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddNodes(ctx, other, placementtest.Spec{Racks: 1, HostsPerRack: 1, CPU: 64, MemoryMB: 65536, DiskGB: 1000, Cores: 32}); err != nil {
		t.Fatal(err)
	}
	f, err := s.Flavor(ctx, 2, 1024, 10, false)
	if err != nil {
		t.Fatal(err)
	}
	p := placement.New(placement.Config{})
	svc, err := p.CreateService(ctx, c, ent.CreateRegionServiceInput{Name: "pinned-cluster", TenantID: s.Tenant, RegionID: s.Region,
		FlavorID: &f.ID, Replicas: new(2)})
	if err != nil {
		t.Fatal(err)
	}
	replicas := c.VirtualMachine.Query().Where(virtualmachine.HasRegionServiceWith(regionservice.ID(svc.ID))).WithNode().AllX(ctx)
	if len(replicas) != 2 {
		t.Fatalf("%d replicas, want 2", len(replicas))
	}
	node := replicas[0].Edges.Node.ID
	tx, err := c.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := drain.Drain(ctx, tx.Client(), p, node, time.Hour, false, time.Now())
	if err != nil {
		_ = tx.Rollback()
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if len(rep.Moving) != 0 || len(rep.Unmovable) != 1 || rep.Unmovable[0].VM.ID != replicas[0].ID {
		t.Fatalf("drain moving %d, unmovable %+v; want the replica unmovable (its cluster is full)", len(rep.Moving), rep.Unmovable)
	}
	n := c.ComputeNode.GetX(ctx, node)
	if n.DrainState == nil || *n.DrainState != computenode.DrainStateFailed || len(n.DrainUnmovable) != 1 ||
		n.DrainUnmovable[0].VMID != replicas[0].ID {
		t.Errorf("node after the drain: state %v, unmovable %+v; want FAILED at once listing the replica", n.DrainState, n.DrainUnmovable)
	}
	if got := c.VirtualMachine.Query().Where(virtualmachine.ID(replicas[0].ID)).QueryCluster().OnlyIDX(ctx); got != s.Cluster {
		t.Errorf("the replica is in cluster %d, want its service's %d", got, s.Cluster)
	}
}
