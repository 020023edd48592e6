package placement

import (
	"strings"
	"testing"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/regionservice"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// TestScaleNeverSpansClusters: a region service lives in one cluster (seed 001: no
// scheduling across clusters). Its cluster full, a scale-up is NO_CAPACITY on replicas
// naming the cluster, although another cluster of the region has room, and nothing was
// created; within its cluster it grows.
func TestScaleNeverSpansClusters(t *testing.T) {
	db := openPostgres(t)
	ctx, c := placementtest.Ctx(), db.Client
	// The site's cluster: one node with room for two replicas.
	s := build(t, c, placementtest.Spec{Racks: 1, HostsPerRack: 1, CPU: 4, MemoryMB: 8192, DiskGB: 100, Cores: 4})
	c.Cluster.UpdateOneID(s.Cluster).SetWeight(100).ExecX(ctx)
	// A second, lower-weight cluster with plenty of room.
	other, err := s.AddCluster(ctx, "other", 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddNodes(ctx, other, placementtest.Spec{Racks: 1, HostsPerRack: 2, CPU: 64, MemoryMB: 65536, DiskGB: 1000, Cores: 32}); err != nil {
		t.Fatal(err)
	}
	f, err := s.Flavor(ctx, 2, 1024, 10, false)
	if err != nil {
		t.Fatal(err)
	}
	p := New(Config{})
	svc, err := p.CreateService(ctx, c, ent.CreateRegionServiceInput{Name: "one-cluster", TenantID: s.Tenant, RegionID: s.Region,
		FlavorID: &f.ID, Replicas: new(1)})
	if err != nil {
		t.Fatal(err)
	}
	inCluster := func() map[int]int {
		out := map[int]int{}
		for _, vm := range c.VirtualMachine.Query().Where(virtualmachine.HasRegionServiceWith(regionservice.ID(svc.ID))).WithCluster().AllX(ctx) {
			out[vm.Edges.Cluster.ID]++
		}
		return out
	}
	if got := inCluster(); got[s.Cluster] != 1 || len(got) != 1 {
		t.Fatalf("replicas per cluster %v, want 1 in the site's cluster %d", got, s.Cluster)
	}
	if _, err := p.ScaleService(ctx, c, svc.ID, 2); err != nil {
		t.Fatalf("scale to 2 (fits its cluster): %v", err)
	}
	_, err = p.ScaleService(ctx, c, svc.ID, 3)
	e := expectCode(t, err, apierr.CodeNoCapacity)
	name := c.Cluster.GetX(ctx, s.Cluster).Name
	if e.Field != "replicas" || !strings.Contains(e.Message, name) || !strings.Contains(e.Message, "never spans two clusters") {
		t.Errorf("scale beyond its cluster: %s %q; want NO_CAPACITY on replicas naming cluster %s", e.Field, e.Message, name)
	}
	if got := inCluster(); got[s.Cluster] != 2 || len(got) != 1 {
		t.Errorf("replicas per cluster after the refused scale-up %v, want 2 in cluster %d only", got, s.Cluster)
	}
	if r := c.RegionService.GetX(ctx, svc.ID).Replicas; r != 2 {
		t.Errorf("service replicas %d after the refused scale-up, want 2", r)
	}
}

// TestResizeNeverShrinksDisk: a flavor with a smaller disk is VALIDATION on flavorID.
func TestResizeNeverShrinksDisk(t *testing.T) {
	db := openPostgres(t)
	ctx, c := placementtest.Ctx(), db.Client
	s := build(t, c, placementtest.Spec{Racks: 1, HostsPerRack: 1, CPU: 8, MemoryMB: 8192, DiskGB: 100, Cores: 8})
	big, _ := s.Flavor(ctx, 2, 1024, 20, false)
	small, _ := s.Flavor(ctx, 2, 1024, 10, false)
	p := New(Config{})
	vm, err := p.CreateVM(ctx, c, vmInput(s, big, "disk"))
	if err != nil {
		t.Fatal(err)
	}
	c.VirtualMachine.UpdateOneID(vm.ID).SetStatus(virtualmachine.StatusStopped).ExecX(ctx)
	_, err = p.Resize(ctx, c, vm.ID, small.ID)
	if e := expectCode(t, err, apierr.CodeValidation); e.Field != "flavorID" || !strings.Contains(e.Message, "only grows") {
		t.Errorf("shrinking resize: %s %q; want VALIDATION on flavorID saying a root disk only grows", e.Field, e.Message)
	}
}

// TestOneAssignmentPerVM: the database refuses a second assignment of a VM on the same
// node, and a second live (not desired ABSENT) one anywhere; AssignOnNode takes a leftover
// assignment over instead, with a newer generation and the VM's config drive.
func TestOneAssignmentPerVM(t *testing.T) {
	db := openPostgres(t)
	ctx, c := placementtest.Ctx(), db.Client
	s := build(t, c, placementtest.Spec{Racks: 1, HostsPerRack: 2, CPU: 8, MemoryMB: 8192, DiskGB: 100, Cores: 8})
	f, _ := s.Flavor(ctx, 1, 512, 0, false)
	vm, err := New(Config{}).CreateVM(ctx, c, vmInput(s, f, "once"))
	if err != nil {
		t.Fatal(err)
	}
	n0, n1 := s.Nodes[0].ID, s.Nodes[1].ID
	first := c.Assignment.Create().SetNodeID(n0).SetVirtualMachineID(vm.ID).SetDesiredState(assignment.DesiredStateStopped).
		SetConfigDrive(`{"hostname":"once"}`).SaveX(ctx)
	if err := c.Assignment.Create().SetNodeID(n0).SetVirtualMachineID(vm.ID).SetDesiredState(assignment.DesiredStateAbsent).Exec(ctx); err == nil {
		t.Errorf("a second assignment of the VM on the same node was accepted")
	}
	if err := c.Assignment.Create().SetNodeID(n1).SetVirtualMachineID(vm.ID).Exec(ctx); err == nil {
		t.Errorf("a second live assignment of the VM (on another node) was accepted")
	}
	// Retired on n0, assigned on n1, then back on n0: the leftover is taken over.
	c.Assignment.UpdateOne(first).SetDesiredState(assignment.DesiredStateAbsent).AddGeneration(1).ExecX(ctx)
	a1, err := AssignOnNode(ctx, c, vm.ID, n1, assignment.DesiredStateStopped, "moved")
	if err != nil {
		t.Fatal(err)
	}
	if a1.Generation != 3 || a1.ConfigDrive != `{"hostname":"once"}` {
		t.Errorf("assignment on n1: generation %d, drive %q; want 3 and the VM's drive", a1.Generation, a1.ConfigDrive)
	}
	c.Assignment.UpdateOne(a1).SetDesiredState(assignment.DesiredStateAbsent).ExecX(ctx)
	a0, err := AssignOnNode(ctx, c, vm.ID, n0, assignment.DesiredStateRunning, "back")
	if err != nil {
		t.Fatal(err)
	}
	if a0.ID != first.ID || a0.Generation != 4 || a0.DesiredState != assignment.DesiredStateRunning || a0.Status != assignment.StatusPending {
		t.Errorf("back on n0: assignment %d gen %d %s/%s; want the leftover %d taken over at generation 4, RUNNING/PENDING",
			a0.ID, a0.Generation, a0.DesiredState, a0.Status, first.ID)
	}
	if n := c.Assignment.Query().Where(assignment.VMID(vm.ID)).CountX(ctx); n != 2 {
		t.Errorf("%d assignments of the VM, want 2 (one per node)", n)
	}
}
