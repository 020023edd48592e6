package graph_test

import (
	"testing"

	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// TestExclusiveFlavorsGraphQL: createFlavor and updateFlavor take exclusive (default NONE);
// on a two-node site whose agents reported two NUMA nodes each (reportNodeStatus numaNodes),
// a HOST VM takes one node alone, two NUMA_NODE VMs take the other's two NUMA nodes, and
// then a shared VM finds no node (NO_CAPACITY naming the Exclusive filter); the nodes read
// their NUMA nodes and the VMs their numaNode.
func TestExclusiveFlavorsGraphQL(t *testing.T) {
	env, f := newEnv(t)
	s, err := placementtest.Build(gqltest.System(), env.Client, placementtest.Spec{
		Racks: 2, HostsPerRack: 1, CPU: 16, MemoryMB: 65536, DiskGB: 1000, Cores: 8})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range s.Nodes {
		env.MustDo(t, `mutation($in: NodeStatusInput!) { reportNodeStatus(input: $in) { id } }`, map[string]any{"in": map[string]any{
			"nodeID": gqltest.ID(n.ID), "healthy": true, "reservedCPUs": 0,
			"numaNodes": []map[string]any{
				{"id": 0, "cpus": []int{0, 1, 2, 3, 4, 5, 6, 7}, "memoryMB": 32768},
				{"id": 1, "cpus": []int{8, 9, 10, 11, 12, 13, 14, 15}, "memoryMB": 32768}}}}, nil)
	}
	var nodes struct {
		Node struct {
			NumaNodes []fieldtype.NUMANode
		}
	}
	env.MustDo(t, `query($id: ID!) { node(id: $id) { ... on ComputeNode { numaNodes { id cpus memoryMB } } } }`,
		map[string]any{"id": gqltest.ID(s.Nodes[0].ID)}, &nodes)
	if len(nodes.Node.NumaNodes) != 2 || len(nodes.Node.NumaNodes[1].CPUs) != 8 {
		t.Fatalf("numaNodes %+v", nodes.Node.NumaNodes)
	}

	shared := flavorOf(f)
	var fl struct{ Node struct{ Exclusive string } }
	env.MustDo(t, `query($id: ID!) { node(id: $id) { ... on Flavor { exclusive } } }`, map[string]any{"id": shared}, &fl)
	if fl.Node.Exclusive != "NONE" {
		t.Errorf("default exclusive %q, want NONE", fl.Node.Exclusive)
	}
	// Smaller than the nodes, so that only exclusivity keeps the shared VM out.
	host := flavorOf(f, map[string]any{"vcpus": 8, "memoryMB": 30000, "exclusive": "HOST"})
	numa := flavorOf(f, map[string]any{"vcpus": 4, "memoryMB": 16000})
	f.update("Flavor", numa, map[string]any{"exclusive": "NUMA_NODE"})
	env.MustDo(t, `query($id: ID!) { node(id: $id) { ... on Flavor { exclusive } } }`, map[string]any{"id": numa}, &fl)
	if fl.Node.Exclusive != "NUMA_NODE" {
		t.Fatalf("updated exclusive %q, want NUMA_NODE", fl.Node.Exclusive)
	}
	if r := f.tryCreate("Flavor", map[string]any{"name": uniq("bad"), "vcpus": 1, "memoryMB": 128, "exclusive": "SOCKET"}); len(r.Errors) == 0 {
		t.Errorf("exclusive SOCKET accepted: %s", r.Data)
	}

	h := createVM(t, env, vmIn(s, host))
	n1 := createVM(t, env, vmIn(s, numa))
	n2 := createVM(t, env, vmIn(s, numa))
	if n1.Node.ID != n2.Node.ID || n1.Node.ID == h.Node.ID {
		t.Fatalf("HOST VM on %s, NUMA VMs on %s and %s: want the NUMA VMs together on the other node", h.Node.ID, n1.Node.ID, n2.Node.ID)
	}
	var vm struct{ Node struct{ NumaNode *int } }
	cells := map[int]bool{}
	for _, id := range []string{n1.ID, n2.ID} {
		env.MustDo(t, `query($id: ID!) { node(id: $id) { ... on VirtualMachine { numaNode } } }`, map[string]any{"id": id}, &vm)
		if vm.Node.NumaNode == nil {
			t.Fatalf("VM %s has no numaNode", id)
		}
		cells[*vm.Node.NumaNode] = true
	}
	if len(cells) != 2 {
		t.Errorf("NUMA VMs on NUMA nodes %v, want 0 and 1", cells)
	}
	e := env.Do(t, `mutation($in: CreateVirtualMachineInput!) { createVirtualMachine(input: $in) { id } }`,
		map[string]any{"in": vmIn(s, shared)}).ExpectError(t, "NO_CAPACITY", "")
	if reasons(e)["Exclusive"] != float64(2) {
		t.Errorf("reasons %v: want Exclusive for both nodes", reasons(e))
	}
	books(t, s)
}
