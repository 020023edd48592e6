package placement

import (
	"context"
	"fmt"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/cluster"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/regionservice"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// What every move of a VM (a drain's Move, a Resize onto another node) keeps true, in the
// move's own transaction (issue 24):
//
//   - the VM's node, cluster and availability zone are those of the node it moves to: a zone
//     the tenant chose at create (availability_zone_chosen) is a constraint of the move, any
//     other zone follows the node, so that no later decision (a resize) reads a stale zone;
//   - a region service's replica moves only within the cluster of the service's other
//     replicas: a service never spans two clusters (SPEC.md §4, seed 001);
//   - the VM's addresses are its ports' in its networks, which are the region's, so they go
//     with it unchanged (and so does the config drive, see AssignOnNode).

// moveScope narrows req for moving vm (loaded with its availability zone and region
// service): its chosen zone, and for a replica the cluster of the service's other replicas.
func moveScope(ctx context.Context, c *ent.Client, vm *ent.VirtualMachine, req *Request) error {
	if az := vm.Edges.AvailabilityZone; az != nil && vm.AvailabilityZoneChosen {
		req.AvailabilityZone = az.Name
	}
	if svc := vm.Edges.RegionService; svc != nil {
		name, err := serviceCluster(ctx, c, svc.ID, vm.ID)
		if err != nil {
			return err
		}
		if name != "" {
			req.Policy.ClusterNames = []string{name}
		}
	}
	return nil
}

// serviceCluster is the name of the cluster the other placed replicas of region service
// svc (all but VM except) are in; empty when there are none.
func serviceCluster(ctx context.Context, c *ent.Client, svc, except int) (string, error) {
	names, err := c.Cluster.Query().Where(cluster.HasVirtualMachinesWith(
		virtualmachine.HasRegionServiceWith(regionservice.ID(svc)), virtualmachine.IDNEQ(except))).
		Order(ent.Asc(cluster.FieldID)).Select(cluster.FieldName).Strings(system(ctx))
	if err != nil {
		return "", fmt.Errorf("cluster of region service %d: %w", svc, err)
	}
	if len(names) == 0 {
		return "", nil
	}
	return names[0], nil
}

// zoneOf is the availability zone of node id in the placement's snapshot (0 for none).
func (p *Placed) zoneOf(node int) int {
	return p.Snapshot.nodes[node].azID
}

// setZone makes u give the VM the zone of the node it is placed on, unless the tenant
// chose its zone (then placement kept it there).
func setZone(u *ent.VirtualMachineUpdateOne, vm *ent.VirtualMachine, zone int) {
	if vm.AvailabilityZoneChosen {
		return
	}
	if zone == 0 {
		u.ClearAvailabilityZone()
		return
	}
	u.SetAvailabilityZoneID(zone)
}

// setNUMANode records the NUMA node a whole-NUMA-node VM owns on its new node, or clears
// it when the VM owns none there.
func setNUMANode(u *ent.VirtualMachineUpdateOne, numa *int) {
	if numa == nil {
		u.ClearNumaNode()
		return
	}
	u.SetNumaNode(*numa)
}

// AssignOnNode tells node's agent what to do with VM vm (desired state, the reason the
// agent and operators read) through c, as the system: the VM's assignment there gets a
// generation above every earlier one of the VM and the VM's newest config drive. The
// database holds one assignment per VM and node (and one not desired ABSENT per VM), so a
// leftover assignment on that node (an old copy a drain or a resize retired) is taken over
// rather than a second one written beside it. Every other assignment of the VM must be
// desired ABSENT already.
func AssignOnNode(ctx context.Context, c *ent.Client, vm, node int, desired assignment.DesiredState, reason string) (*ent.Assignment, error) {
	sys := system(ctx)
	onVM := assignment.HasVirtualMachineWith(virtualmachine.ID(vm))
	newest, err := c.Assignment.Query().Where(onVM).Order(ent.Desc(assignment.FieldGeneration)).First(sys)
	if err != nil && !ent.IsNotFound(err) {
		return nil, fmt.Errorf("assignments of VM %d: %w", vm, err)
	}
	next, drive := int64(1), ""
	if newest != nil {
		next, drive = newest.Generation+1, newest.ConfigDrive
	}
	here, err := c.Assignment.Query().Where(onVM, assignment.HasNodeWith(computenode.ID(node))).Only(sys)
	switch {
	case ent.IsNotFound(err):
		return c.Assignment.Create().SetNodeID(node).SetVirtualMachineID(vm).SetDesiredState(desired).
			SetConfigDrive(drive).SetStatus(assignment.StatusPending).SetGeneration(next).
			SetStatusReason(reason).Save(sys)
	case err != nil:
		return nil, fmt.Errorf("assignment of VM %d on node %d: %w", vm, node, err)
	}
	return c.Assignment.UpdateOne(here).SetDesiredState(desired).SetConfigDrive(drive).
		SetStatus(assignment.StatusPending).SetGeneration(next).ClearObservedState().
		SetStatusReason(reason).Save(sys)
}
