package placement

import (
	"testing"

	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/domain/scheduler"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
)

func TestLoadSnapshot(t *testing.T) {
	db := openPostgres(t)
	ctx := placementtest.Ctx()
	c := db.Client
	s := build(t, c, placementtest.Spec{Racks: 4, HostsPerRack: 2, PowerZones: 2, NetworkZones: 2, RackZones: 2,
		CPU: 16, MemoryMB: 65536, DiskGB: 1000, Cores: 8, Providers: true,
		Labels: func(n int) fieldtype.Labels { return fieldtype.Labels{"n": string(rune('a' + n))} }})

	// Host 0 overrides its rack's power zone; node 1 is cordoned and allocated; node 2 is down.
	own, err := c.PowerZone.Create().SetName(s.Prefix + "-own").SetDatacenterID(s.Datacenter).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c.Host.UpdateOneID(s.Nodes[0].HostID).SetPowerZoneID(own.ID).ExecX(ctx)
	c.ComputeNode.UpdateOneID(s.Nodes[1].ID).SetSchedulable(false).SetCPUAllocated(7).SetMemoryAllocatedMB(100).ExecX(ctx)
	c.ComputeNode.UpdateOneID(s.Nodes[2].ID).SetStatus(computenode.StatusDown).ExecX(ctx)
	// A second, lower-id-less group without a quota, and the tenant's quota on the site's.
	other, err := c.HostGroup.Create().SetName(s.Prefix + "-other").AddHostIDs(s.Nodes[0].HostID).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	q, err := s.Quota(ctx, s.Tenant, 40, 50)
	if err != nil {
		t.Fatal(err)
	}
	c.Quota.UpdateOneID(q.ID).SetUsedVcpus(6).ExecX(ctx)

	snap, err := Load(ctx, c, s.Tenant, s.Region)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Clusters) != 1 || snap.Clusters[0].ID != s.Cluster || snap.Clusters[0].Weight != 100 {
		t.Fatalf("clusters = %+v, want the site's cluster", snap.Clusters)
	}
	if len(snap.Nodes) != 8 {
		t.Fatalf("%d nodes, want 8", len(snap.Nodes))
	}
	for i, n := range snap.Nodes {
		site := s.Nodes[i]
		rack := s.Racks[site.Rack]
		wantPower := rack.PowerZone
		if i == 0 {
			wantPower = own.Name
		}
		if n.ID != site.ID || n.ClusterID != s.Cluster || n.PowerZone != wantPower || n.NetworkZone != rack.NetworkZone ||
			n.RackZone != rack.Key {
			t.Errorf("node %d: %+v; want id %d, power %s, network %s, rack zone %s", i, n, site.ID, wantPower, rack.NetworkZone, rack.Key)
		}
		if n.HostGroupID != s.HostGroup {
			t.Errorf("node %d counts in host group %d, want the one with the quota, %d (not %d)", i, n.HostGroupID, s.HostGroup, other.ID)
		}
		if len(n.Providers) != 1 || n.Providers[0] != s.ProviderName {
			t.Errorf("node %d providers %v, want [%s]", i, n.Providers, s.ProviderName)
		}
		if n.Labels["n"] != string(rune('a'+i)) {
			t.Errorf("node %d labels %v", i, n.Labels)
		}
		if n.CPUCapacity != 16 || n.MemoryMB != 65536 || n.DiskGB != 1000 {
			t.Errorf("node %d capacity %d/%d/%d", i, n.CPUCapacity, n.MemoryMB, n.DiskGB)
		}
	}
	n1 := snap.Nodes[1]
	if n1.Schedulable || !n1.Ready || n1.CPUAllocated != 7 || n1.MemoryAllocatedMB != 100 {
		t.Errorf("cordoned node: %+v", n1)
	}
	// 9 vCPUs free with 2 threads per core: 4 whole cores, 8 pinnable vCPUs.
	if n1.DedicatedCoresFree != 8 {
		t.Errorf("cordoned node: DedicatedCoresFree = %d, want 8", n1.DedicatedCoresFree)
	}
	if snap.Nodes[2].Ready || snap.Nodes[0].DedicatedCoresFree != 16 {
		t.Errorf("down node ready %v; idle node dedicated free %d, want 16", snap.Nodes[2].Ready, snap.Nodes[0].DedicatedCoresFree)
	}
	wantQuota := scheduler.Quota{VCPUs: 40, UsedVCPUs: 6, CPUPercent: 50, GroupCores: 64}
	if got := snap.Quotas[scheduler.QuotaKey{TenantID: s.Tenant, HostGroupID: s.HostGroup}]; got != wantQuota {
		t.Errorf("quota %+v, want %+v (8 hosts × 8 cores)", got, wantQuota)
	}
}

// TestLoadSnapshotQueries: loading costs the same few statements for 4 nodes as for 120.
func TestLoadSnapshotQueries(t *testing.T) {
	db := openPostgres(t)
	ctx := placementtest.Ctx()
	client, n := counting(db)
	count := func(spec placementtest.Spec) int64 {
		s := build(t, db.Client, spec)
		if _, err := s.Quota(ctx, s.Tenant, 0, 100); err != nil {
			t.Fatal(err)
		}
		n.Store(0)
		snap, err := Load(ctx, client, s.Tenant, s.Region)
		if err != nil {
			t.Fatal(err)
		}
		if len(snap.Nodes) != spec.Racks*spec.HostsPerRack {
			t.Fatalf("%d nodes, want %d", len(snap.Nodes), spec.Racks*spec.HostsPerRack)
		}
		return n.Load()
	}
	small := count(placementtest.Spec{Racks: 2, HostsPerRack: 2, CPU: 8, MemoryMB: 1024, Cores: 4, Providers: true})
	large := count(placementtest.Spec{Racks: 12, HostsPerRack: 10, PowerZones: 3, NetworkZones: 2, CPU: 8, MemoryMB: 1024, Cores: 4, Providers: true})
	if small > 10 || large != small {
		t.Errorf("loading a snapshot took %d statements for 4 nodes and %d for 120; want the same, at most 10", small, large)
	}
}

func TestDedicatedFree(t *testing.T) {
	for _, tc := range []struct{ capacity, allocated, cores, threads, want int }{
		{16, 0, 8, 16, 16},
		{16, 11, 8, 16, 4}, // 5 free: 2 whole cores
		{16, 16, 8, 16, 0},
		{16, 20, 8, 16, 0}, // over-allocated by hand: nothing
		{12, 5, 0, 0, 7},   // the host says nothing: 1 thread per core
		{12, 5, 6, 9, 7},   // threads do not divide: 1
		{32, 3, 8, 32, 28}, // 4 threads per core
	} {
		tpc := threadsPerCore(tc.cores, tc.threads)
		if got := dedicatedFree(tc.capacity, tc.allocated, tpc); got != tc.want {
			t.Errorf("dedicatedFree(capacity %d, allocated %d, %d cores, %d threads) = %d, want %d",
				tc.capacity, tc.allocated, tc.cores, tc.threads, got, tc.want)
		}
	}
}

func TestHostGroupFor(t *testing.T) {
	for _, tc := range []struct {
		groups    []int
		withQuota map[int]bool
		want      int
	}{
		{nil, nil, 0},
		{[]int{3, 7}, nil, 3},
		{[]int{3, 7}, map[int]bool{7: true}, 7},
		{[]int{3, 7, 9}, map[int]bool{7: true, 9: true}, 7},
	} {
		if got := hostGroupFor(tc.groups, tc.withQuota); got != tc.want {
			t.Errorf("hostGroupFor(%v, %v) = %d, want %d", tc.groups, tc.withQuota, got, tc.want)
		}
	}
}
