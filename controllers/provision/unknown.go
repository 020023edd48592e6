package provision

import (
	"context"
	"fmt"
	"time"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// known are the VM states an agent's reports stand behind: the ones a DOWN node can no
// longer confirm.
var known = []virtualmachine.Status{virtualmachine.StatusActive, virtualmachine.StatusStopped,
	virtualmachine.StatusStarting, virtualmachine.StatusStopping, virtualmachine.StatusRebooting}

// MarkUnknown sets the VMs placed on a node that went DOWN to UNKNOWN, in client's
// transaction: nobody can tell whether they still run. VMs being created or deleted keep
// their status (their tasks and the reconcile loop deal with them). It returns how many
// changed, dating the change now. The node monitor calls it when it marks a node DOWN.
func MarkUnknown(ctx context.Context, client *ent.Client, node *ent.ComputeNode, why string, now time.Time) (int, error) {
	n, err := client.VirtualMachine.Update().
		Where(virtualmachine.HasNodeWith(computenode.ID(node.ID)), virtualmachine.StatusIn(known...)).
		SetStatus(virtualmachine.StatusUnknown).SetStatusChangedAt(now).
		SetStatusReason("its node is DOWN (" + why + "): whether it runs is unknown").Save(system(ctx))
	if err != nil {
		return 0, fmt.Errorf("mark VMs of node %s unknown: %w", node.Name, err)
	}
	return n, nil
}

// RestoreKnown gives the UNKNOWN VMs of nodes that are READY again the state their
// assignment on that node stands for: ACTIVE or STOPPED when the agent applied it (what it
// reported before the node went silent, or since), STARTING or STOPPING while it works on
// it; a VM without an assignment there is left UNKNOWN. Each VM changes only if it is still
// UNKNOWN, dated now. It returns how many changed. The node monitor runs it on every tick: an agent
// that comes back does not report again what it reported before.
func RestoreKnown(ctx context.Context, client *ent.Client, now time.Time) (int, error) {
	sys := system(ctx)
	vms, err := client.VirtualMachine.Query().
		Where(virtualmachine.StatusEQ(virtualmachine.StatusUnknown), virtualmachine.HasNodeWith(computenode.StatusEQ(computenode.StatusReady))).
		WithNode().All(sys)
	if err != nil {
		return 0, fmt.Errorf("unknown VMs on ready nodes: %w", err)
	}
	changed := 0
	for _, vm := range vms {
		a, err := assignmentOf(ctx, client, vm)
		if err != nil {
			return changed, err
		}
		if a == nil {
			continue
		}
		applied := a.Status == assignment.StatusApplied
		var status virtualmachine.Status
		switch {
		case a.DesiredState == assignment.DesiredStateRunning && applied:
			status = virtualmachine.StatusActive
		case a.DesiredState == assignment.DesiredStateRunning:
			status = virtualmachine.StatusStarting
		case a.DesiredState == assignment.DesiredStateStopped && applied:
			status = virtualmachine.StatusStopped
		case a.DesiredState == assignment.DesiredStateStopped:
			status = virtualmachine.StatusStopping
		default:
			continue // being deleted: the delete's report decides
		}
		n, err := client.VirtualMachine.Update().Where(virtualmachine.ID(vm.ID), virtualmachine.StatusEQ(virtualmachine.StatusUnknown)).
			SetStatus(status).SetStatusChangedAt(now).
			SetStatusReason(fmt.Sprintf("its node is back: %s as its agent last reported", status)).Save(sys)
		if err != nil {
			return changed, fmt.Errorf("restore VM %s: %w", vm.Name, err)
		}
		changed += n
	}
	return changed, nil
}
