package placement

import (
	"fmt"
	"testing"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/ent/ipaddress"
	"github.com/virtflow/virtflow/ent/loadbalancer"
	"github.com/virtflow/virtflow/ent/network"
	"github.com/virtflow/virtflow/ent/rack"
	"github.com/virtflow/virtflow/ent/region"
	"github.com/virtflow/virtflow/ent/regionservice"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// TestLifecycleTakesNoNewVMs: a RETIRED or MAINTENANCE host and a DECOMMISSIONING rack take
// no new VM, and explainPlacement names the filter and why; a CLOSED region takes none.
func TestLifecycleTakesNoNewVMs(t *testing.T) {
	db := openPostgres(t)
	ctx, c := placementtest.Ctx(), db.Client
	s := build(t, c, placementtest.Spec{Racks: 3, HostsPerRack: 1, CPU: 8, MemoryMB: 8192, DiskGB: 100, Cores: 4, Providers: true})
	f, err := s.Flavor(ctx, 2, 1024, 10, false)
	if err != nil {
		t.Fatal(err)
	}
	c.Host.UpdateOneID(s.Nodes[0].HostID).SetLifecycle(host.LifecycleRetired).ExecX(ctx)
	c.Host.UpdateOneID(s.Nodes[1].HostID).SetLifecycle(host.LifecycleMaintenance).ExecX(ctx)
	c.Rack.UpdateOneID(s.Racks[s.Nodes[2].Rack].ID).SetStatus(rack.StatusDecommissioning).ExecX(ctx)
	p := New(Config{})
	_, err = p.CreateVM(ctx, c, vmInput(s, f, "web-1"))
	expectCode(t, err, apierr.CodeNoCapacity)
	ex, err := p.Explain(ctx, c, ExplainInput{TenantID: s.Tenant, RegionID: s.Region, FlavorID: f.ID})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, n := range ex.Nodes {
		if n.RejectedBy == nil {
			t.Fatalf("node %s passed", n.Node.Name)
		}
		got[n.Node.Name] = *n.RejectedBy + "/" + *n.Code
	}
	want := map[string]string{s.Nodes[0].Name: "Lifecycle/HOST_RETIRED", s.Nodes[1].Name: "Lifecycle/HOST_MAINTENANCE",
		s.Nodes[2].Name: "Lifecycle/RACK_DECOMMISSIONING"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("explanation %v, want %v", got, want)
	}

	// Back in service, then the region closes.
	c.Host.Update().Where(host.IDIn(s.Nodes[0].HostID, s.Nodes[1].HostID)).SetLifecycle(host.LifecycleActive).ExecX(ctx)
	c.Rack.UpdateOneID(s.Racks[s.Nodes[2].Rack].ID).SetStatus(rack.StatusActive).ExecX(ctx)
	if _, err := p.CreateVM(ctx, c, vmInput(s, f, "web-2")); err != nil {
		t.Fatalf("in service again: %v", err)
	}
	c.Region.UpdateOneID(s.Region).SetStatus(region.StatusClosed).ExecX(ctx)
	_, err = p.CreateVM(ctx, c, vmInput(s, f, "web-3"))
	if e := expectCode(t, err, apierr.CodeNoCapacity); e.Extra["reasons"].(map[string]any)["Lifecycle"] != 3 {
		t.Errorf("closed region: reasons %v, want Lifecycle: 3", e.Extra["reasons"])
	}
}

// TestLabelSpread: hard label anti-affinity puts each replica on its own value of the key
// (and fails when there are fewer values than replicas); explainPlacement shows the spread.
func TestLabelSpread(t *testing.T) {
	db := openPostgres(t)
	ctx, c := placementtest.Ctx(), db.Client
	// Three racks of two nodes, labelled by rack.
	s := build(t, c, placementtest.Spec{Racks: 3, HostsPerRack: 2, CPU: 16, MemoryMB: 16384, DiskGB: 100, Cores: 8, Providers: true,
		Labels: func(n int) fieldtype.Labels { return fieldtype.Labels{"topology/rack": fmt.Sprint(n / 2)} }})
	f, err := s.Flavor(ctx, 2, 1024, 10, false)
	if err != nil {
		t.Fatal(err)
	}
	p := New(Config{})
	pol := fieldtype.SchedulePolicy{NodeLabelHardAntiAffinities: fieldtype.Labels{"topology/rack": ""}}
	svc, err := p.CreateService(ctx, c, ent.CreateRegionServiceInput{Name: "spread", TenantID: s.Tenant, RegionID: s.Region,
		FlavorID: &f.ID, Replicas: new(3), SchedulePolicy: &pol})
	if err != nil {
		t.Fatal(err)
	}
	vms := c.VirtualMachine.Query().Where(virtualmachine.HasRegionServiceWith(regionservice.ID(svc.ID))).WithNode().AllX(ctx)
	racks := map[string]bool{}
	for _, vm := range vms {
		racks[vm.Edges.Node.Labels["topology/rack"]] = true
	}
	if len(vms) != 3 || len(racks) != 3 {
		t.Fatalf("%d replicas on %d rack label values, want 3 on 3", len(vms), len(racks))
	}
	// A fourth replica has no value left.
	_, err = p.ScaleService(ctx, c, svc.ID, 4)
	if e := expectCode(t, err, apierr.CodeNoCapacity); e.Extra["reasons"].(map[string]any)["NodeLabelHardAntiAffinity"] != 6 {
		t.Errorf("reasons %v, want NodeLabelHardAntiAffinity: 6", e.Extra["reasons"])
	}
	ex, err := p.Explain(ctx, c, ExplainInput{TenantID: s.Tenant, RegionID: s.Region, FlavorID: f.ID, Policy: pol, RegionServiceID: svc.ID})
	if err != nil {
		t.Fatal(err)
	}
	if ex.Placeable || len(ex.Spread) != 3 {
		t.Fatalf("explanation placeable %v, spread %+v; want not placeable, 3 values", ex.Placeable, ex.Spread)
	}
	for _, sp := range ex.Spread {
		if sp.Mode != "HARD" || sp.VMs != 1 || sp.Nodes != 2 {
			t.Errorf("spread %+v, want HARD, 1 VM, 2 nodes", sp)
		}
	}
}

// TestStoredPolicyMigrates: a policy stored before anti-affinity meant spreading reads as
// the exclusion it meant.
func TestStoredPolicyMigrates(t *testing.T) {
	db := openPostgres(t)
	ctx, c := placementtest.Ctx(), db.Client
	s := build(t, c, placementtest.Spec{Racks: 1, HostsPerRack: 1, CPU: 8, MemoryMB: 8192, DiskGB: 100, Cores: 4, Providers: true})
	f, err := s.Flavor(ctx, 2, 1024, 10, false)
	if err != nil {
		t.Fatal(err)
	}
	vm := c.VirtualMachine.Create().SetName("old").SetTenantID(s.Tenant).SetRegionID(s.Region).SetFlavorID(f.ID).SaveX(ctx)
	if _, err := db.DB.ExecContext(ctx, `UPDATE virtual_machines SET schedule_policy = $1 WHERE id = $2`,
		`{"nodeLabelHardAntiAffinities":{"gen":"old"},"nodeLabelSoftAntiAffinities":{"noisy":"yes"}}`, vm.ID); err != nil {
		t.Fatal(err)
	}
	got := c.VirtualMachine.GetX(ctx, vm.ID).SchedulePolicy
	if got.NodeLabelHardExclusions["gen"] != "old" || got.NodeLabelSoftExclusions["noisy"] != "yes" ||
		len(got.NodeLabelHardAntiAffinities) != 0 || len(got.NodeLabelSoftAntiAffinities) != 0 {
		t.Fatalf("migrated policy %+v", got)
	}
	// Written back, it is stored as the current version and reads the same.
	c.VirtualMachine.UpdateOneID(vm.ID).SetSchedulePolicy(got).ExecX(ctx)
	if again := c.VirtualMachine.GetX(ctx, vm.ID).SchedulePolicy; fmt.Sprint(again) != fmt.Sprint(got) {
		t.Fatalf("re-read %+v, want %+v", again, got)
	}
}

// TestQuotaCountsEarlierVMs: a quota set after the tenant has VMs counts them.
func TestQuotaCountsEarlierVMs(t *testing.T) {
	db := openPostgres(t)
	ctx, c := placementtest.Ctx(), db.Client
	s := build(t, c, placementtest.Spec{Racks: 1, HostsPerRack: 2, CPU: 8, MemoryMB: 8192, DiskGB: 100, Cores: 4, Providers: true})
	f, err := s.Flavor(ctx, 2, 1024, 10, false)
	if err != nil {
		t.Fatal(err)
	}
	p := New(Config{})
	for i := range 2 {
		if _, err := p.CreateVM(ctx, c, vmInput(s, f, fmt.Sprintf("early-%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := SetQuota(ctx, c, QuotaInput{TenantID: s.Tenant, HostGroupID: s.HostGroup, VCPUs: new(5)}); err != nil {
		t.Fatal(err)
	}
	u, err := QuotaUsage(ctx, c, &s.Tenant, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(u) != 1 || u[0].UsedVCPUs != 4 || u[0].UsedMemoryMB != 2048 || u[0].UsedStorageGB != 20 {
		t.Fatalf("usage %+v, want 4 vCPUs, 2048 MB, 20 GB", u)
	}
	// And the quota holds: one more 2-vCPU VM is 6 > 5.
	_, err = p.CreateVM(ctx, c, vmInput(s, f, "late"))
	expectCode(t, err, apierr.CodeQuotaExceeded)
}

// TestAvailabilityZoneChoice: a VM goes to the zone chosen at create; without a choice it
// reads the zone of the node it was placed on.
func TestAvailabilityZoneChoice(t *testing.T) {
	db := openPostgres(t)
	ctx, c := placementtest.Ctx(), db.Client
	s := build(t, c, placementtest.Spec{Racks: 2, HostsPerRack: 2, CPU: 8, MemoryMB: 8192, DiskGB: 100, Cores: 4, Providers: true})
	f, err := s.Flavor(ctx, 2, 1024, 10, false)
	if err != nil {
		t.Fatal(err)
	}
	a := c.AvailabilityZone.Create().SetName(s.Prefix + "-a").SetRegionID(s.Region).SaveX(ctx)
	b := c.AvailabilityZone.Create().SetName(s.Prefix + "-b").SetRegionID(s.Region).SaveX(ctx)
	for i, n := range s.Nodes {
		c.ComputeNode.UpdateOneID(n.ID).SetAvailabilityZoneID([]int{a.ID, b.ID}[i%2]).ExecX(ctx)
	}
	p := New(Config{})
	for i := range 3 {
		in := vmInput(s, f, fmt.Sprintf("in-b-%d", i))
		in.AvailabilityZoneID = &b.ID
		vm, err := p.CreateVM(ctx, c, in)
		if err != nil {
			t.Fatal(err)
		}
		got := c.VirtualMachine.Query().Where(virtualmachine.ID(vm.ID)).WithNode(func(q *ent.ComputeNodeQuery) { q.WithAvailabilityZone() }).
			WithAvailabilityZone().OnlyX(ctx)
		if got.Edges.AvailabilityZone == nil || got.Edges.AvailabilityZone.ID != b.ID || got.Edges.Node.Edges.AvailabilityZone.ID != b.ID {
			t.Fatalf("VM %s: zone %v on a node of zone %v, want %s", vm.Name, got.Edges.AvailabilityZone, got.Edges.Node.Edges.AvailabilityZone, b.Name)
		}
	}
	vm, err := p.CreateVM(ctx, c, vmInput(s, f, "anywhere"))
	if err != nil {
		t.Fatal(err)
	}
	got := c.VirtualMachine.Query().Where(virtualmachine.ID(vm.ID)).WithNode(func(q *ent.ComputeNodeQuery) { q.WithAvailabilityZone() }).
		WithAvailabilityZone().OnlyX(ctx)
	if got.Edges.AvailabilityZone == nil || got.Edges.AvailabilityZone.ID != got.Edges.Node.Edges.AvailabilityZone.ID {
		t.Fatalf("unchosen zone %v, want its node's %v", got.Edges.AvailabilityZone, got.Edges.Node.Edges.AvailabilityZone)
	}
	other := c.AvailabilityZone.Create().SetName(s.Prefix + "-elsewhere").
		SetRegionID(c.Region.Create().SetName(s.Prefix + "-r2").SaveX(ctx).ID).SaveX(ctx)
	in := vmInput(s, f, "wrong-zone")
	in.AvailabilityZoneID = &other.ID
	_, err = p.CreateVM(ctx, c, in)
	if e := expectCode(t, err, apierr.CodeValidation); e.Field != "availabilityZoneID" {
		t.Errorf("field %q, want availabilityZoneID", e.Field)
	}
}

// TestImageMinimums: an image's minimum vCPUs and memory are checked against the flavor.
func TestImageMinimums(t *testing.T) {
	db := openPostgres(t)
	ctx, c := placementtest.Ctx(), db.Client
	s := build(t, c, placementtest.Spec{Racks: 1, HostsPerRack: 1, CPU: 8, MemoryMB: 8192, DiskGB: 100, Cores: 4, Providers: true})
	small, err := s.Flavor(ctx, 1, 512, 10, false)
	if err != nil {
		t.Fatal(err)
	}
	img := c.Image.Create().SetName(s.Prefix + "-img").SetSource("https://example.invalid/i.qcow2").
		SetMinVcpus(2).SetMinMemoryMB(1024).SaveX(ctx)
	in := vmInput(s, small, "too-small")
	in.ImageID = &img.ID
	_, err = New(Config{}).CreateVM(ctx, c, in)
	if e := expectCode(t, err, apierr.CodeValidation); e.Field != "flavorID" {
		t.Errorf("field %q, want flavorID", e.Field)
	}
}

// TestResize: a stopped VM grows in place when its node has room, moves when it has not,
// keeps its spec history, and the tenant's quota is checked for the difference.
func TestResize(t *testing.T) {
	db := openPostgres(t)
	ctx, c := placementtest.Ctx(), db.Client
	s := build(t, c, placementtest.Spec{Racks: 2, HostsPerRack: 1, CPU: 8, MemoryMB: 8192, DiskGB: 100, Cores: 8, Providers: true})
	if _, err := s.Quota(ctx, s.Tenant, 10, 100); err != nil {
		t.Fatal(err)
	}
	f2, _ := s.Flavor(ctx, 2, 1024, 10, false)
	f4, _ := s.Flavor(ctx, 4, 2048, 10, false)
	f6, _ := s.Flavor(ctx, 6, 2048, 10, false)
	f12, _ := s.Flavor(ctx, 8, 2048, 10, false)
	p := New(Config{})
	vm, err := p.CreateVM(ctx, c, vmInput(s, f2, "grow"))
	if err != nil {
		t.Fatal(err)
	}
	home := c.VirtualMachine.QueryNode(vm).OnlyIDX(ctx)
	// Fill the other node a bit, and the VM's own node up to 6 of 8.
	filler := vmInput(s, f4, "filler")
	filler.SchedulePolicy = &fieldtype.SchedulePolicy{NodeNames: []string{c.ComputeNode.GetX(ctx, home).Name}}
	if _, err := p.CreateVM(ctx, c, filler); err != nil {
		t.Fatal(err)
	}

	_, err = p.Resize(ctx, c, vm.ID, f4.ID)
	expectCode(t, err, apierr.CodeValidation) // not stopped
	c.VirtualMachine.UpdateOneID(vm.ID).SetStatus(virtualmachine.StatusStopped).ExecX(ctx)

	// 2 → 4 vCPUs: the node has 8 - 6 + 2 = 4 free for it: in place.
	r, err := p.Resize(ctx, c, vm.ID, f4.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Moved || r.VM.Revision != 2 || len(r.VM.RevisionHistory) != 1 || r.VM.RevisionHistory[0].FlavorID != f2.ID {
		t.Fatalf("in place: moved %v, revision %d, history %+v", r.Moved, r.VM.Revision, r.VM.RevisionHistory)
	}
	if n := c.ComputeNode.GetX(ctx, home); n.CPUAllocated != 8 {
		t.Errorf("home node allocates %d vCPUs, want 8", n.CPUAllocated)
	}
	// 4 → 6: the home node has 4 for it, the other 8: a cold move.
	r, err = p.Resize(ctx, c, vm.ID, f6.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Moved || r.From != home || r.To == home || r.VM.Revision != 3 {
		t.Fatalf("move: %+v", r)
	}
	if n := c.ComputeNode.GetX(ctx, home); n.CPUAllocated != 4 {
		t.Errorf("home node allocates %d vCPUs after the move, want 4 (the filler)", n.CPUAllocated)
	}
	// 6 → 8 is 12 vCPUs for the tenant with the filler: more than its 10.
	_, err = p.Resize(ctx, c, vm.ID, f12.ID)
	expectCode(t, err, apierr.CodeQuotaExceeded)
	if got := c.VirtualMachine.GetX(ctx, vm.ID); got.AllocatedVcpus != 6 || got.Revision != 3 {
		t.Errorf("after a refused resize: %d vCPUs, revision %d; want 6, 3", got.AllocatedVcpus, got.Revision)
	}
	// History is capped at maxRevisionHistory.
	c.VirtualMachine.UpdateOneID(vm.ID).SetMaxRevisionHistory(2).ExecX(ctx)
	for _, f := range []*ent.Flavor{f4, f2} {
		if r, err = p.Resize(ctx, c, vm.ID, f.ID); err != nil {
			u, _ := QuotaUsage(ctx, c, &s.Tenant, nil)
			t.Fatalf("%v; usage %+v; nodes %+v", err, *u[0], c.ComputeNode.Query().AllX(ctx))
		}
	}
	if h := r.VM.RevisionHistory; r.VM.Revision != 5 || len(h) != 2 || h[0].Revision != 3 || h[1].Revision != 4 {
		t.Fatalf("revision %d, history %+v; want 5 with revisions 3 and 4", r.VM.Revision, h)
	}
}

// TestServiceLoadBalancer: a load-balanced service gets a load balancer with a VIP, NOT_REALIZED
// with a reason saying so; deleting its last replica deletes the service, the load balancer
// and the VIP (it used to fail with CONFLICT).
func TestServiceLoadBalancer(t *testing.T) {
	db := openPostgres(t)
	ctx, c := placementtest.Ctx(), db.Client
	s := build(t, c, placementtest.Spec{Racks: 1, HostsPerRack: 2, CPU: 8, MemoryMB: 8192, DiskGB: 100, Cores: 4, Providers: true})
	f, _ := s.Flavor(ctx, 2, 1024, 10, false)
	p := New(Config{})
	in := ent.CreateRegionServiceInput{Name: "lb", TenantID: s.Tenant, RegionID: s.Region, FlavorID: &f.ID,
		Replicas: new(1), LoadBalanced: new(true)}
	_, err := p.CreateService(ctx, c, in)
	if e := expectCode(t, err, apierr.CodeValidation); e.Field != "loadBalanced" {
		t.Errorf("without a SERVICE network: field %q", e.Field)
	}
	net := c.Network.Create().SetName(s.Prefix + "-svc").SetCidr("10.77.0.0/24").SetVrf(s.Prefix).SetPurpose(network.PurposeService).
		SetDatacenterID(s.Datacenter).SaveX(ctx)
	svc, err := p.CreateService(ctx, c, in)
	if err != nil {
		t.Fatal(err)
	}
	lb := c.LoadBalancer.Query().Where(loadbalancer.HasRegionServiceWith(regionservice.ID(svc.ID))).WithVip().OnlyX(ctx)
	if lb.Status != loadbalancer.StatusNotRealized || lb.Edges.Vip == nil || lb.Edges.Vip.Address != "10.77.0.1" ||
		lb.StatusReason != fmt.Sprintf(ReasonLBNotRealized, "10.77.0.1") {
		t.Fatalf("load balancer %+v, VIP %+v", lb, lb.Edges.Vip)
	}
	vm := c.VirtualMachine.Query().Where(virtualmachine.HasRegionServiceWith(regionservice.ID(svc.ID))).OnlyX(ctx)
	if err := p.DeleteVM(ctx, c, vm.ID); err != nil {
		t.Fatalf("delete the last replica: %v", err)
	}
	if n := c.RegionService.Query().Where(regionservice.ID(svc.ID)).CountX(ctx); n != 0 {
		t.Error("service left")
	}
	if n := c.LoadBalancer.Query().Where(loadbalancer.ID(lb.ID)).CountX(ctx); n != 0 {
		t.Error("load balancer left")
	}
	if n := c.IPAddress.Query().Where(ipaddress.HasNetworkWith(network.ID(net.ID))).CountX(ctx); n != 0 {
		t.Error("VIP left allocated")
	}
}
