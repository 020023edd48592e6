package drain

import (
	"context"
	"fmt"
	"time"

	"github.com/virtflow/virtflow/domain/placement"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// retire is the first half of a cold move, in the drain's transaction, once placement.Move
// re-placed the VM: every assignment of the VM on its old node that is not ABSENT yet
// becomes desired ABSENT (generation bumped, status PENDING), so the old node's agent stops
// and removes the domain. The assignment carries the VM's id (vmID) for that agent, which
// may no longer read the VM itself. Nothing is assigned on the new node yet: [recreate]
// does that once the old copy is confirmed gone (see progressNode). A VM without any
// assignment was never created on a hypervisor: its pending vm:create task creates it on
// the new node, so only its reason changes. A realized VM reads MOVING from now until its
// new node reports the new copy (ACTIVE or STOPPED, as it was: state_after_move). c is the
// caller's transactional client, ctx the system's.
func retire(ctx context.Context, c *ent.Client, vm *ent.VirtualMachine, mv *placement.Moved, now time.Time) (*ent.VirtualMachine, error) {
	realized, err := c.Assignment.Query().Where(assignment.HasVirtualMachineWith(virtualmachine.ID(vm.ID))).Exist(ctx)
	if err != nil {
		return nil, fmt.Errorf("assignments of VM %s: %w", vm.Name, err)
	}
	if !realized {
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
	u := c.VirtualMachine.UpdateOneID(vm.ID).
		SetStatusReason(clip(fmt.Sprintf("moving from node %s to node %s (drain): stopping it on %s first", mv.FromName, mv.ToName, mv.FromName), 1024))
	if vm.Status != virtualmachine.StatusMoving {
		// MOVING until the new node reports the new copy in the state this one had.
		after := virtualmachine.StateAfterMoveRunning
		if vm.Status == virtualmachine.StatusStopped || vm.Status == virtualmachine.StatusStopping {
			after = virtualmachine.StateAfterMoveStopped
		}
		u.SetStatus(virtualmachine.StatusMoving).SetStatusChangedAt(now).SetStateAfterMove(after)
	}
	return u.Save(ctx)
}

// recreate is the second half of a cold move: the VM's old copy on node from is gone (or
// the drain was forced), so a new assignment on the VM's current node asks for its power
// state (STOPPED for a stopped VM, RUNNING otherwise) with a generation above every earlier
// one of the VM. The new node's agent builds the domain afresh from the VM's image.
func recreate(ctx context.Context, c *ent.Client, vm *ent.VirtualMachine, from *ent.ComputeNode) error {
	to := vm.Edges.Node
	desired := assignment.DesiredStateRunning
	switch {
	case vm.StateAfterMove != nil && *vm.StateAfterMove == virtualmachine.StateAfterMoveStopped,
		vm.StateAfterMove == nil && vm.Status == virtualmachine.StatusStopped:
		desired = assignment.DesiredStateStopped
	}
	// One assignment per VM and node: a leftover one on the new node is taken over, and
	// the config drive the provisioning task rendered goes with the VM (the newest one).
	if _, err := placement.AssignOnNode(ctx, c, vm.ID, to.ID, desired,
		fmt.Sprintf("recreate VM moved from node %s by a drain", from.Name)); err != nil {
		return fmt.Errorf("assign VM %s to node %s: %w", vm.Name, to.Name, err)
	}
	return c.VirtualMachine.UpdateOneID(vm.ID).
		SetStatusReason(clip(fmt.Sprintf("moving from node %s to node %s (drain): creating it on %s", from.Name, to.Name, to.Name), 1024)).
		Exec(ctx)
}
