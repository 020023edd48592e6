package diagram_test

import (
	"slices"
	"testing"

	"github.com/virtflow/virtflow/domain/diagram"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// TestNetworkDiagramRunsOn: a VM assigned to a compute node is linked to the node's host by a
// RUNS_ON edge (id: the assignment), from the VM and from the host; a VM never assigned is not.
func TestNetworkDiagramRunsOn(t *testing.T) {
	env := newEnv(t)
	n := buildSmallNet(t, env.Client)
	ctx, c := gqltest.System(), env.Client
	vm := c.VirtualMachine.Query().Where(virtualmachine.ID(n.v.ID)).WithRegion().OnlyX(ctx)
	dc := c.Datacenter.Create().SetName(n.p + "dc2").SetRegion(vm.Edges.Region).SaveX(ctx)
	cl := c.Cluster.Create().SetName(n.p + "cl").SetRegion(vm.Edges.Region).SetDatacenter(dc).SaveX(ctx)
	node := c.ComputeNode.Create().SetName(n.p + "node-a").SetHost(n.a).SetCluster(cl).SaveX(ctx)
	c.VirtualMachine.UpdateOneID(n.v.ID).SetNode(node).SetCluster(cl).ExecX(ctx)
	a := c.Assignment.Create().SetNodeID(node.ID).SetVirtualMachineID(n.v.ID).SaveX(ctx)
	admin := viewerCtx(t, env, gqltest.AdminToken)
	one := 1
	for _, from := range []int{n.v.ID, n.a.ID} {
		d, err := diagram.Network(admin, c, from, &one)
		if err != nil {
			t.Fatal(err)
		}
		got := edges(d, n.p)
		if !slices.Contains(got, "RUNS_ON v-a") {
			t.Errorf("from %d: edges %q, want RUNS_ON v-a", from, got)
		}
		if slices.Contains(got, "RUNS_ON w-a") {
			t.Errorf("from %d: the unassigned VM w is linked to a host: %q", from, got)
		}
		for _, e := range d.Edges {
			if e.Kind == diagram.EdgeRunsOn && e.ID != a.ID {
				t.Errorf("RUNS_ON edge id %d, want the assignment %d", e.ID, a.ID)
			}
		}
	}
}
