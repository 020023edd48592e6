package provision

import (
	"context"
	"fmt"

	"github.com/virtflow/virtflow/domain/placement"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// Resize changes a STOPPED VM's flavor (placement.Placer.Resize) and tells the agents, in
// client's transaction. On the same node the VM's assignment there gets a new generation
// (still STOPPED), so the agent defines the domain afresh at the new size and grows its root
// disk to the flavor's. Moved to another node (a VM without volumes whose node has no room),
// the old node's assignment becomes desired ABSENT (its agent removes the stopped domain)
// and the VM's assignment on the new node (placement.AssignOnNode: one per VM and node,
// taking over a leftover one) asks for it STOPPED with a generation above every earlier one
// and the VM's config drive; the VM reads MOVING until that node reports the domain defined,
// then STOPPED. The VM is stopped throughout, so two copies never run. A VM never realized
// on a node only changes in the database: its pending vm:create task creates it at the new
// size.
func (s *Service) Resize(ctx context.Context, client *ent.Client, id, flavorID int) (*ent.VirtualMachine, error) {
	r, err := s.placer.Resize(ctx, client, id, flavorID)
	if err != nil {
		return nil, err
	}
	if !r.Changed {
		return client.VirtualMachine.Get(ctx, id)
	}
	sys := system(ctx)
	onVM := assignment.HasVirtualMachineWith(virtualmachine.ID(id))
	if !r.Moved {
		if _, err := client.Assignment.Update().
			Where(onVM, assignment.HasNodeWith(computenode.ID(r.From)), assignment.DesiredStateNEQ(assignment.DesiredStateAbsent)).
			AddGeneration(1).SetStatus(assignment.StatusPending).SetStatusReason("resized: define the domain at the new size").
			Save(sys); err != nil {
			return nil, fmt.Errorf("resize VM %d on its node: %w", id, err)
		}
		return client.VirtualMachine.Get(ctx, id)
	}
	realized, err := client.Assignment.Query().Where(onVM).Exist(sys)
	if err != nil {
		return nil, fmt.Errorf("assignments of VM %d: %w", id, err)
	}
	if !realized {
		return client.VirtualMachine.Get(ctx, id)
	}
	if _, err := client.Assignment.Update().
		Where(onVM, assignment.HasNodeWith(computenode.ID(r.From)), assignment.DesiredStateNEQ(assignment.DesiredStateAbsent)).
		SetDesiredState(assignment.DesiredStateAbsent).SetStatus(assignment.StatusPending).
		SetStatusReason("VM resized onto another node").AddGeneration(1).Save(sys); err != nil {
		return nil, fmt.Errorf("retire VM %d on its old node: %w", id, err)
	}
	if _, err := placement.AssignOnNode(ctx, client, id, r.To, assignment.DesiredStateStopped, "VM resized onto this node"); err != nil {
		return nil, fmt.Errorf("assign VM %d to its new node: %w", id, err)
	}
	if err := client.VirtualMachine.UpdateOneID(id).SetStatus(virtualmachine.StatusMoving).SetStatusChangedAt(s.now()).
		SetStateAfterMove(virtualmachine.StateAfterMoveStopped).
		SetStatusReason("resized onto another node (its node had no room): moving; STOPPED once its new node has defined it").
		Exec(sys); err != nil {
		return nil, fmt.Errorf("resize VM %d: %w", id, err)
	}
	return client.VirtualMachine.Get(ctx, id)
}
