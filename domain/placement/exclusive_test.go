package placement

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/flavor"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// exclusiveSite is a site of nodes with 16 vCPUs and 64 GiB in two NUMA nodes of 8 CPUs
// and 32 GiB, with a HOST flavor (16 vCPUs), a NUMA_NODE flavor (8 vCPUs) and a shared one.
func exclusiveSite(t *testing.T, c *ent.Client, racks int) (s *placementtest.Site, host, numa, shared *ent.Flavor) {
	t.Helper()
	ctx := placementtest.Ctx()
	s = build(t, c, placementtest.Spec{Racks: racks, HostsPerRack: 1, CPU: 16, MemoryMB: 64 << 10, DiskGB: 1000, Cores: 8})
	for _, n := range s.Nodes {
		err := c.ComputeNode.UpdateOneID(n.ID).SetNumaNodes([]fieldtype.NUMANode{
			{ID: 0, CPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}, MemoryMB: 32 << 10},
			{ID: 1, CPUs: []int{8, 9, 10, 11, 12, 13, 14, 15}, MemoryMB: 32 << 10},
		}).Exec(ctx)
		if err != nil {
			t.Fatal(err)
		}
	}
	mk := func(vcpus int, mem int64, e flavor.Exclusive) *ent.Flavor {
		f, err := s.Flavor(ctx, vcpus, mem, 10, false)
		if err != nil {
			t.Fatal(err)
		}
		if f, err = f.Update().SetExclusive(e).Save(ctx); err != nil {
			t.Fatal(err)
		}
		return f
	}
	return s, mk(16, 60<<10, flavor.ExclusiveHost), mk(8, 30<<10, flavor.ExclusiveNumaNode), mk(2, 1024, flavor.ExclusiveNone)
}

// checkExclusive fails the test unless every node of s is held by exactly one HOST VM
// alone, or by NUMA_NODE VMs alone on distinct NUMA nodes, or by shared VMs only, and its
// exclusive_mask is exactly what its VMs hold.
func checkExclusive(t *testing.T, c *ent.Client, s *placementtest.Site) {
	t.Helper()
	ctx := placementtest.Ctx()
	for _, n := range s.Nodes {
		node, err := c.ComputeNode.Get(ctx, n.ID)
		if err != nil {
			t.Fatal(err)
		}
		vms, err := c.VirtualMachine.Query().Where(virtualmachine.HasNodeWith(computenode.ID(n.ID))).WithFlavor().All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		kinds := map[flavor.Exclusive]int{}
		var mask int64
		cells := map[int]bool{}
		for _, vm := range vms {
			kinds[vm.Edges.Flavor.Exclusive]++
			if mask&vm.ExclusiveMask != 0 {
				t.Errorf("node %s: VM %s holds bits %b another VM holds", n.Name, vm.Name, vm.ExclusiveMask)
			}
			mask |= vm.ExclusiveMask
			if vm.Edges.Flavor.Exclusive == flavor.ExclusiveNumaNode {
				if vm.NumaNode == nil || cells[*vm.NumaNode] || vm.ExclusiveMask != 1<<(uint(*vm.NumaNode)+1) {
					t.Errorf("node %s: NUMA VM %s has NUMA node %v, mask %b", n.Name, vm.Name, vm.NumaNode, vm.ExclusiveMask)
				} else {
					cells[*vm.NumaNode] = true
				}
			}
		}
		if kinds[flavor.ExclusiveHost] > 1 || (kinds[flavor.ExclusiveHost] == 1 && len(vms) > 1) {
			t.Errorf("node %s: a HOST VM shares the node: %v", n.Name, kinds)
		}
		if kinds[flavor.ExclusiveNumaNode] > 0 && kinds[flavor.ExclusiveNone] > 0 {
			t.Errorf("node %s: NUMA_NODE and shared VMs share the node: %v", n.Name, kinds)
		}
		if node.ExclusiveMask != mask {
			t.Errorf("node %s: exclusive_mask %b, its VMs hold %b", n.Name, node.ExclusiveMask, mask)
		}
	}
}

// TestExclusiveFlavors: a HOST VM takes an empty node and nothing lands beside it; two
// NUMA_NODE VMs share a node on its two NUMA nodes and a third or a shared one finds no room
// there; deleting the HOST VM gives the node back.
func TestExclusiveFlavors(t *testing.T) {
	db := openPostgres(t)
	c := db.Client
	ctx := placementtest.Ctx()
	s, host, numa, shared := exclusiveSite(t, c, 2)
	p := New(Config{})
	create := func(f *ent.Flavor, name string) (*ent.VirtualMachine, error) {
		return p.CreateVM(ctx, c, ent.CreateVirtualMachineInput{Name: s.Prefix + "-" + name, TenantID: s.Tenant, RegionID: s.Region, FlavorID: f.ID})
	}
	h, err := create(host, "host")
	if err != nil {
		t.Fatal(err)
	}
	if h.ExclusiveMask != 1 || h.NumaNode != nil {
		t.Fatalf("HOST VM holds %b, NUMA node %v: want the host bit", h.ExclusiveMask, h.NumaNode)
	}
	// The other node takes two NUMA VMs, then is full for NUMA and shared alike.
	n1, err := create(numa, "numa-1")
	if err != nil {
		t.Fatal(err)
	}
	n2, err := create(numa, "numa-2")
	if err != nil {
		t.Fatal(err)
	}
	if n1.NumaNode == nil || n2.NumaNode == nil || *n1.NumaNode == *n2.NumaNode {
		t.Fatalf("NUMA VMs on NUMA nodes %v and %v: want 0 and 1", n1.NumaNode, n2.NumaNode)
	}
	for _, f := range []*ent.Flavor{numa, shared, host} {
		if _, err := create(f, "extra-"+strings.ToLower(strings.ReplaceAll(string(f.Exclusive), "_", "-"))); !isCode(err, apierr.CodeNoCapacity) {
			t.Errorf("a %s VM on a full site: err %v, want NO_CAPACITY", f.Exclusive, err)
		}
	}
	checkExclusive(t, c, s)
	checkBooks(t, s)

	// Deleting the HOST VM frees its node for a shared VM.
	if err := p.DeleteVM(ctx, c, h.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := create(shared, "shared"); err != nil {
		t.Fatalf("a shared VM after the HOST VM left: %v", err)
	}
	if _, err := create(host, "host-2"); !isCode(err, apierr.CodeNoCapacity) {
		t.Errorf("a HOST VM beside a shared one: err %v, want NO_CAPACITY", err)
	}
	checkExclusive(t, c, s)
	checkBooks(t, s)
}

// TestExclusiveRace races, through two processes with warm caches, HOST, NUMA_NODE and
// shared creates for a region of 3 nodes on PostgreSQL: whatever wins, no node ever holds
// a HOST VM with another VM, two VMs on one NUMA node, or NUMA and shared VMs together, and
// every node's exclusive_mask is what its VMs hold.
func TestExclusiveRace(t *testing.T) {
	ch := channel(t)
	ps := []*process{newProcess(t, testdb.RedisURL(), ch, Config{}), newProcess(t, testdb.RedisURL(), ch, Config{})}
	c := ps[0].db.Client
	for round := range 3 {
		s, host, numa, shared := exclusiveSite(t, c, 3)
		// Warm both caches with the region (a VM placed and deleted by each).
		for i, p := range ps {
			vm, err := p.createVM(s, shared, fmt.Sprintf("%s-warm-%d", s.Prefix, i))
			if err != nil {
				t.Fatal(err)
			}
			if err := p.placer.DeleteVM(placementtest.Ctx(), p.db.Client, vm.ID); err != nil {
				t.Fatal(err)
			}
		}
		// Each round puts another kind first, so each kind wins some of the nodes.
		flavors := [][]*ent.Flavor{{numa, host, shared, numa}, {host, numa, shared, numa}, {shared, numa, numa, host}}[round]
		var wg sync.WaitGroup
		var mu sync.Mutex
		placed := map[flavor.Exclusive]int{}
		start := make(chan struct{})
		for i := range 24 {
			f := flavors[i%len(flavors)]
			wg.Go(func() {
				<-start
				_, err := ps[i%2].createVM(s, f, fmt.Sprintf("%s-r%d-%d", s.Prefix, round, i))
				if err != nil && !isCode(err, apierr.CodeNoCapacity) {
					t.Errorf("create %s: %v", f.Exclusive, err)
					return
				}
				if err == nil {
					mu.Lock()
					placed[f.Exclusive]++
					mu.Unlock()
				}
			})
		}
		close(start)
		wg.Wait()
		t.Logf("round %d placed %v", round, placed)
		if placed[flavor.ExclusiveHost]+placed[flavor.ExclusiveNumaNode]+placed[flavor.ExclusiveNone] == 0 {
			t.Fatal("nothing was placed")
		}
		checkExclusive(t, c, s)
		checkBooks(t, s)
	}
}

// isCode reports whether err is an API error of code.
func isCode(err error, code apierr.Code) bool {
	e, ok := apierr.As(err)
	return ok && e.Code == code
}
