package diagram

import (
	"cmp"
	"context"
	"slices"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/cluster"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/flavor"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/ent/rack"
	"github.com/virtflow/virtflow/ent/tenant"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// Cluster returns the virtual rack of cluster id: its capacity and VM count, and each of its
// nodes with the host (and rack) it runs on and the VMs placed on it with their tenant, flavor
// and status. DELETED VMs are left out. It runs at most 8 SQL statements whatever the number
// of nodes and VMs: the cluster, its nodes, their hosts and racks, their VMs with tenants and
// flavors (ent eager loading), and one grouped count of the cluster's VMs. A cluster that does
// not exist or that the viewer may not read is NOT_FOUND.
func Cluster(ctx context.Context, c *ent.Client, id int) (*ClusterView, error) {
	cl, err := c.Cluster.Query().
		Where(cluster.ID(id)).
		Select(cluster.FieldName).
		WithNodes(func(q *ent.ComputeNodeQuery) {
			capacityColumns(q)
			q.Select(computenode.FieldName, computenode.FieldSchedulable)
			q.WithHost(func(q *ent.HostQuery) {
				q.Select(host.FieldName).WithRack(func(q *ent.RackQuery) { q.Select(rack.FieldName) })
			})
			q.WithVirtualMachines(func(q *ent.VirtualMachineQuery) {
				q.Where(virtualmachine.StatusNEQ(virtualmachine.StatusDeleted)).
					Select(virtualmachine.FieldName, virtualmachine.FieldStatus).
					WithTenant(func(q *ent.TenantQuery) { q.Select(tenant.FieldName) }).
					WithFlavor(func(q *ent.FlavorQuery) {
						q.Select(flavor.FieldName, flavor.FieldVcpus, flavor.FieldMemoryMB)
					})
			})
		}).
		Only(ctx)
	if err != nil {
		return nil, lookupError(err, "cluster", id)
	}
	vms, err := vmCounts(ctx, c, virtualmachine.ClusterColumn, []int{cl.ID})
	if err != nil {
		return nil, err
	}
	v := &ClusterView{Cluster: clusterSummary(cl, vms[cl.ID]), Nodes: make([]ClusterNode, 0, len(cl.Edges.Nodes))}
	for _, n := range cl.Edges.Nodes {
		cn := ClusterNode{Node: *nodeSummary(n, len(n.Edges.VirtualMachines)), VMs: make([]VMSummary, 0, len(n.Edges.VirtualMachines))}
		if h := n.Edges.Host; h != nil {
			cn.HostID, cn.HostName = h.ID, h.Name
			if rk := h.Edges.Rack; rk != nil {
				cn.RackID, cn.RackName = &rk.ID, &rk.Name
			}
		}
		for _, vm := range n.Edges.VirtualMachines {
			cn.VMs = append(cn.VMs, vmSummary(vm))
		}
		slices.SortFunc(cn.VMs, func(a, b VMSummary) int { return cmp.Compare(a.Name, b.Name) })
		v.Nodes = append(v.Nodes, cn)
	}
	slices.SortFunc(v.Nodes, func(a, b ClusterNode) int {
		return cmp.Or(cmp.Compare(deref(a.RackName), deref(b.RackName)), cmp.Compare(a.HostName, b.HostName),
			cmp.Compare(a.Node.Name, b.Node.Name))
	})
	return v, nil
}

// vmSummary is a VM loaded with its tenant and flavor.
func vmSummary(vm *ent.VirtualMachine) VMSummary {
	s := VMSummary{ID: vm.ID, Name: vm.Name, Status: vm.Status}
	if t := vm.Edges.Tenant; t != nil {
		s.TenantID, s.TenantName = t.ID, t.Name
	}
	if f := vm.Edges.Flavor; f != nil {
		s.FlavorName, s.VCPUs, s.MemoryMB = f.Name, f.Vcpus, f.MemoryMB
	}
	return s
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
