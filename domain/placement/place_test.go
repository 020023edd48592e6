package placement

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/domain/scheduler"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// vmInput is a VM of the site's tenant and region.
func vmInput(s *placementtest.Site, f *ent.Flavor, name string) ent.CreateVirtualMachineInput {
	return ent.CreateVirtualMachineInput{Name: name, TenantID: s.Tenant, RegionID: s.Region, FlavorID: f.ID}
}

// expectCode fails the test unless err is an API error with code.
func expectCode(tb testing.TB, err error, code apierr.Code) *apierr.Error {
	tb.Helper()
	e, ok := apierr.As(err)
	if !ok || e.Code != code {
		tb.Fatalf("want %s, got %v", code, err)
	}
	return e
}

func TestCreateAndDeleteVM(t *testing.T) {
	db := openPostgres(t)
	ctx, c := placementtest.Ctx(), db.Client
	s := build(t, c, placementtest.Spec{Racks: 2, HostsPerRack: 1, CPU: 8, MemoryMB: 8192, DiskGB: 100, Cores: 4, Providers: true})
	if _, err := s.Quota(ctx, s.Tenant, 6, 100); err != nil {
		t.Fatal(err)
	}
	f, err := s.Flavor(ctx, 2, 1024, 10, false)
	if err != nil {
		t.Fatal(err)
	}
	p := New(Config{})
	vm, err := p.CreateVM(ctx, c, vmInput(s, f, "web-1"))
	if err != nil {
		t.Fatal(err)
	}
	vm = c.VirtualMachine.Query().Where(virtualmachine.ID(vm.ID)).WithNode().WithCluster().OnlyX(ctx)
	if vm.Edges.Node == nil || vm.Edges.Cluster == nil || vm.Edges.Cluster.ID != s.Cluster {
		t.Fatalf("VM not placed: node %v, cluster %v", vm.Edges.Node, vm.Edges.Cluster)
	}
	if vm.Status != virtualmachine.StatusInitializing || strings.Contains(vm.StatusReason, vm.Edges.Node.Name) {
		t.Errorf("status %s (%q), want INITIALIZING not naming node %s (tenants read it)", vm.Status, vm.StatusReason, vm.Edges.Node.Name)
	}
	if n := vm.Edges.Node; n.CPUAllocated != 2 || n.MemoryAllocatedMB != 1024 || n.DiskAllocatedGB != 10 {
		t.Errorf("node allocation %d/%d/%d, want 2/1024/10", n.CPUAllocated, n.MemoryAllocatedMB, n.DiskAllocatedGB)
	}
	checkBooks(t, s)

	// The quota has room for two more, then QUOTA_EXCEEDED with the reasons.
	for i := 2; i <= 3; i++ {
		if _, err := p.CreateVM(ctx, c, vmInput(s, f, fmt.Sprintf("web-%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	_, err = p.CreateVM(ctx, c, vmInput(s, f, "web-4"))
	e := expectCode(t, err, apierr.CodeQuotaExceeded)
	if reasons, _ := e.Extra["reasons"].(map[string]any); reasons["Quota"] != 2 {
		t.Errorf("reasons %v, want Quota: 2", e.Extra["reasons"])
	}
	if n := c.VirtualMachine.Query().Where(virtualmachine.Name("web-4")).CountX(ctx); n != 0 {
		t.Errorf("a VM that fits nowhere was created")
	}
	checkBooks(t, s)

	if err := p.DeleteVM(ctx, c, vm.ID); err != nil {
		t.Fatal(err)
	}
	checkBooks(t, s)
	if _, err := p.CreateVM(ctx, c, vmInput(s, f, "web-4")); err != nil {
		t.Errorf("after a delete the quota has room again: %v", err)
	}
	expectCode(t, p.DeleteVM(ctx, c, vm.ID), apierr.CodeNotFound)
}

// TestCommitRechecks: a decision whose node or quota filled up after the snapshot is not
// committed, and what the attempt applied is put back.
func TestCommitRechecks(t *testing.T) {
	db := openPostgres(t)
	ctx, c := placementtest.Ctx(), db.Client
	s := build(t, c, placementtest.Spec{Racks: 2, HostsPerRack: 1, CPU: 4, MemoryMB: 4096, DiskGB: 100, Cores: 2})
	q, err := s.Quota(ctx, s.Tenant, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	f, err := s.Flavor(ctx, 2, 1024, 10, false)
	if err != nil {
		t.Fatal(err)
	}
	req := Request{TenantID: s.Tenant, RegionID: s.Region, Flavor: f, Count: 2}.scheduler()
	decide := func() (*Snapshot, scheduler.Decision) {
		snap, err := Load(ctx, c, s.Tenant, s.Region)
		if err != nil {
			t.Fatal(err)
		}
		d, err := scheduler.Schedule(&snap.Snapshot, req, scheduler.DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		return snap, d
	}
	commit := func(snap *Snapshot, d scheduler.Decision) outcome {
		var o outcome
		_, err := inTx(ctx, c, func(t *txn) error {
			var err error
			o, _, _, err = t.commit(ctx, snap, req, d, true, false)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}

	// The second node (in id order) fills up behind the decision's back: the first node's
	// increment is undone.
	snap, d := decide()
	if len(d.Placements) != 2 || d.Placements[0].NodeID == d.Placements[1].NodeID {
		t.Fatalf("want the two VMs spread over the two nodes, got %+v", d.Placements)
	}
	c.ComputeNode.UpdateOneID(s.Nodes[1].ID).SetCPUAllocated(3).ExecX(ctx)
	if o := commit(snap, d); o != nodeFull {
		t.Fatalf("commit on a node filled meanwhile: outcome %d, want nodeFull", o)
	}
	if n := c.ComputeNode.GetX(ctx, s.Nodes[0].ID); n.CPUAllocated != 0 || n.MemoryAllocatedMB != 0 {
		t.Errorf("first node keeps %d vCPUs, %d MB of an undone attempt", n.CPUAllocated, n.MemoryAllocatedMB)
	}
	c.ComputeNode.UpdateOneID(s.Nodes[1].ID).SetCPUAllocated(0).ExecX(ctx)

	// The quota is used up meanwhile: both nodes are put back.
	snap, d = decide()
	c.Quota.UpdateOneID(q.ID).SetUsedVcpus(1).ExecX(ctx)
	if o := commit(snap, d); o != quotaFull {
		t.Fatalf("commit over a quota used meanwhile: outcome %d, want quotaFull", o)
	}
	for _, n := range s.Nodes {
		if got := c.ComputeNode.GetX(ctx, n.ID); got.CPUAllocated != 0 {
			t.Errorf("node %s keeps %d vCPUs of an undone attempt", got.Name, got.CPUAllocated)
		}
	}
	c.Quota.UpdateOneID(q.ID).SetUsedVcpus(0).ExecX(ctx)

	// Unchanged, it commits.
	snap, d = decide()
	if o := commit(snap, d); o != committed {
		t.Fatalf("outcome %d, want committed", o)
	}
	if got := c.Quota.GetX(ctx, q.ID); got.UsedVcpus != 4 || got.UsedMemoryMB != 2048 {
		t.Errorf("quota uses %d vCPUs, %d MB; want 4, 2048", got.UsedVcpus, got.UsedMemoryMB)
	}

	// A quota the snapshot does not know (set after the decision, as a cache that has not
	// heard of it yet would have it) is still read, checked and charged by the commit.
	c.ComputeNode.Update().Where(computenode.IDIn(s.Nodes[0].ID, s.Nodes[1].ID)).SetCPUAllocated(0).
		SetMemoryAllocatedMB(0).SetDiskAllocatedGB(0).ExecX(ctx)
	c.Quota.DeleteOneID(q.ID).ExecX(ctx)
	snap, d = decide()
	if len(snap.quotas) != 0 {
		t.Fatalf("snapshot knows %d quotas; want none", len(snap.quotas))
	}
	q2 := c.Quota.Create().SetTenantID(s.Tenant).SetHostGroupID(s.HostGroup).SetMemoryMB(1024).SaveX(ctx)
	if o := commit(snap, d); o != quotaFull {
		t.Fatalf("commit past a quota the snapshot did not know: outcome %d, want quotaFull", o)
	}
	c.Quota.UpdateOneID(q2.ID).SetMemoryMB(0).SetCPUPercent(100).ExecX(ctx)
	if o := commit(snap, d); o != committed {
		t.Fatalf("outcome %d, want committed", o)
	}
	if got := c.Quota.GetX(ctx, q2.ID); got.UsedVcpus != 4 || got.UsedMemoryMB != 2048 || got.UsedStorageGB != 20 {
		t.Errorf("quota unknown to the snapshot uses %d vCPUs, %d MB, %d GB; want 4, 2048, 20", got.UsedVcpus, got.UsedMemoryMB, got.UsedStorageGB)
	}
}

// TestDedicatedCPU: a dedicated flavor needs whole free cores, re-checked by the commit.
func TestDedicatedCPU(t *testing.T) {
	db := openPostgres(t)
	ctx, c := placementtest.Ctx(), db.Client
	s := build(t, c, placementtest.Spec{Racks: 1, HostsPerRack: 1, CPU: 16, MemoryMB: 65536, DiskGB: 100, Cores: 8})
	node := s.Nodes[0].ID
	c.ComputeNode.UpdateOneID(node).SetCPUAllocated(11).ExecX(ctx) // 5 free: 2 whole cores of 2 threads
	p := New(Config{})
	ded5, _ := s.Flavor(ctx, 5, 1024, 0, true)
	ded4, _ := s.Flavor(ctx, 4, 1024, 0, true)
	shared5, _ := s.Flavor(ctx, 5, 1024, 0, false)

	_, err := p.CreateVM(ctx, c, vmInput(s, ded5, "ded5"))
	if e := expectCode(t, err, apierr.CodeNoCapacity); fmt.Sprint(e.Extra["reasons"]) != "map[CPUFit:1]" {
		t.Errorf("reasons %v, want CPUFit: 1", e.Extra["reasons"])
	}
	if _, err := p.CreateVM(ctx, c, vmInput(s, ded4, "ded4")); err != nil {
		t.Fatalf("4 dedicated vCPUs fit 2 whole free cores: %v", err)
	}
	if got := c.ComputeNode.GetX(ctx, node).CPUAllocated; got != 15 {
		t.Errorf("allocated %d, want 15", got)
	}
	c.ComputeNode.UpdateOneID(node).SetCPUAllocated(11).ExecX(ctx)
	if _, err := p.CreateVM(ctx, c, vmInput(s, shared5, "shared5")); err != nil {
		t.Errorf("5 shared vCPUs fit 5 free: %v", err)
	}

	// The SQL re-check agrees with the snapshot's rule.
	c.ComputeNode.UpdateOneID(node).SetCPUAllocated(11).ExecX(ctx)
	u := &nodeUsage{usage: usage{cpu: 5}, dedicated: true, threads: 2}
	if n := c.ComputeNode.Update().Where(computenode.ID(node), nodeFits(u)).AddCPUAllocated(0).SaveX(ctx); n != 0 {
		t.Errorf("nodeFits lets 5 dedicated vCPUs onto 2 whole free cores")
	}
	u.cpu = 4
	if n, err := c.ComputeNode.Update().Where(computenode.ID(node), nodeFits(u)).AddCPUAllocated(0).Save(ctx); err != nil || n != 1 {
		t.Errorf("nodeFits refuses 4 dedicated vCPUs on 2 whole free cores: %d, %v", n, err)
	}
}

// TestBinpackAndSpread: the default spreads a group over the emptiest nodes; BinpackConfig
// packs it onto the fullest.
func TestBinpackAndSpread(t *testing.T) {
	db := openPostgres(t)
	ctx, c := placementtest.Ctx(), db.Client
	for _, tc := range []struct {
		name  string
		cfg   scheduler.Config
		nodes int
	}{
		{"spread", scheduler.DefaultConfig(), 3},
		{"binpack", scheduler.BinpackConfig(), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := build(t, c, placementtest.Spec{Racks: 3, HostsPerRack: 1, CPU: 16, MemoryMB: 65536, DiskGB: 100, Cores: 8})
			c.ComputeNode.UpdateOneID(s.Nodes[1].ID).SetCPUAllocated(1).ExecX(ctx) // the fullest, by less than a VM
			f, _ := s.Flavor(ctx, 2, 1024, 0, false)
			p := New(Config{Scheduler: tc.cfg})
			used := map[int]bool{}
			for i := range 3 {
				vm, err := p.CreateVM(ctx, c, vmInput(s, f, fmt.Sprintf("%s-%d", tc.name, i)))
				if err != nil {
					t.Fatal(err)
				}
				used[vm.QueryNode().OnlyIDX(ctx)] = true
			}
			if len(used) != tc.nodes {
				t.Errorf("3 VMs on %d nodes, want %d", len(used), tc.nodes)
			}
			if tc.nodes == 1 && !used[s.Nodes[1].ID] {
				t.Errorf("binpack did not choose the fullest node")
			}
		})
	}
}

// TestSQLiteConcurrentQuota: on the embedded database, concurrent placements take turns
// (immediate transactions, busy timeout, busy retries) and the quota holds exactly.
func TestSQLiteConcurrentQuota(t *testing.T) {
	db := openSQLite(t)
	ctx, c := placementtest.Ctx(), db.Client
	s := build(t, c, placementtest.Spec{Racks: 2, HostsPerRack: 2, CPU: 64, MemoryMB: 1 << 20, DiskGB: 1000, Cores: 32})
	if _, err := s.Quota(ctx, s.Tenant, 20, 0); err != nil {
		t.Fatal(err)
	}
	f, _ := s.Flavor(ctx, 2, 1024, 10, false)
	p := New(Config{})
	const n = 40
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, errs[i] = p.CreateVM(ctx, c, vmInput(s, f, fmt.Sprintf("sq-%d", i)))
		})
	}
	wg.Wait()
	ok, quota := 0, 0
	for _, err := range errs {
		var e *apierr.Error
		switch {
		case err == nil:
			ok++
		case errors.As(err, &e) && e.Code == apierr.CodeQuotaExceeded:
			quota++
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	if ok != 10 || quota != n-10 {
		t.Errorf("%d placed, %d QUOTA_EXCEEDED; want 10 and %d", ok, quota, n-10)
	}
	checkBooks(t, s)
}

// TestRequireQuota: with Config.Scheduler.RequireQuota, a tenant without a quota in the
// host group places nothing there.
func TestRequireQuota(t *testing.T) {
	db := openPostgres(t)
	ctx, c := placementtest.Ctx(), db.Client
	s := build(t, c, placementtest.Spec{Racks: 1, HostsPerRack: 2, CPU: 8, MemoryMB: 8192, DiskGB: 100, Cores: 4})
	f, _ := s.Flavor(ctx, 2, 1024, 0, false)
	strict := New(Config{Scheduler: scheduler.Config{Weights: scheduler.DefaultConfig().Weights, RequireQuota: true}})
	_, err := strict.CreateVM(ctx, c, vmInput(s, f, "strict-1"))
	expectCode(t, err, apierr.CodeQuotaExceeded)
	if _, err := s.Quota(ctx, s.Tenant, 0, 100); err != nil {
		t.Fatal(err)
	}
	if _, err := strict.CreateVM(ctx, c, vmInput(s, f, "strict-1")); err != nil {
		t.Fatal(err)
	}
	checkBooks(t, s)
}
