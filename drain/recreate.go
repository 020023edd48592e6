package drain

import (
	"context"
	"fmt"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/placement"
)

// recreate asks the node agents to move a VM placement.Move re-placed. A VM without any
// assignment was never created on a hypervisor: its pending vm:create task (package
// provision) creates it on the new node, so nothing more is needed. Otherwise every assignment
// of the VM on its old node that is not ABSENT yet becomes desired ABSENT (generation
// bumped, status PENDING) so the old agent tears the domain down, and a new assignment on
// the new node asks for the VM's power state (STOPPED for a stopped VM, RUNNING otherwise)
// with a generation above every earlier one of the VM. The VM's status is left to the
// provisioning pipeline; its statusReason says where it is going. c is the caller's
// transactional client, ctx the system's.
func recreate(ctx context.Context, c *ent.Client, vm *ent.VirtualMachine, mv *placement.Moved) (*ent.VirtualMachine, error) {
	realized, err := c.Assignment.Query().Where(assignment.HasVirtualMachineWith(virtualmachine.ID(vm.ID))).Exist(ctx)
	if err != nil {
		return nil, fmt.Errorf("assignments of VM %s: %w", vm.Name, err)
	}
	if !realized {
		// Not created on any hypervisor yet: its vm:create task creates it on the new node.
		return c.VirtualMachine.UpdateOneID(vm.ID).
			SetStatusReason(clip(fmt.Sprintf("moved from node %s to node %s (drain); waiting to be provisioned", mv.FromName, mv.ToName), 1024)).
			Save(ctx)
	}
	if _, err := c.Assignment.Update().
		Where(assignment.HasVirtualMachineWith(virtualmachine.ID(vm.ID)), assignment.HasNodeWith(computenode.ID(mv.From)),
			assignment.DesiredStateNEQ(assignment.DesiredStateAbsent)).
		SetDesiredState(assignment.DesiredStateAbsent).SetStatus(assignment.StatusPending).
		SetStatusReason(fmt.Sprintf("VM moved to node %s by a drain", mv.ToName)).
		AddGeneration(1).Save(ctx); err != nil {
		return nil, fmt.Errorf("retire assignment of VM %s on node %s: %w", vm.Name, mv.FromName, err)
	}
	var gens []struct {
		Max int64 `sql:"max"`
	}
	if err := c.Assignment.Query().Where(assignment.HasVirtualMachineWith(virtualmachine.ID(vm.ID))).
		Aggregate(ent.Max(assignment.FieldGeneration)).Scan(ctx, &gens); err != nil {
		return nil, fmt.Errorf("generations of VM %s: %w", vm.Name, err)
	}
	next := int64(1)
	if len(gens) > 0 {
		next = gens[0].Max + 1
	}
	desired := assignment.DesiredStateRunning
	if vm.Status == virtualmachine.StatusStopped {
		desired = assignment.DesiredStateStopped
	}
	if err := c.Assignment.Create().SetNodeID(mv.To).SetVirtualMachineID(vm.ID).SetDesiredState(desired).
		SetStatus(assignment.StatusPending).SetGeneration(next).
		SetStatusReason(fmt.Sprintf("recreate VM moved from node %s by a drain", mv.FromName)).
		Exec(ctx); err != nil {
		return nil, fmt.Errorf("assign VM %s to node %s: %w", vm.Name, mv.ToName, err)
	}
	return c.VirtualMachine.UpdateOneID(vm.ID).
		SetStatusReason(clip(fmt.Sprintf("moving from node %s to node %s (drain)", mv.FromName, mv.ToName), 1024)).
		Save(ctx)
}
