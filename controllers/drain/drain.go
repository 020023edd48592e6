package drain

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/placement"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/maintenance"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/ent/volume"
)

// DefaultTimeout is how long a drain may take when the caller does not say.
const DefaultTimeout = 30 * time.Minute

// Report is what Drain did.
type Report struct {
	Node        *ent.ComputeNode
	Maintenance *ent.Maintenance
	// Unmovable are the VMs that stay, with the reason, in VM id order.
	Unmovable []Unmovable
	// Moving are the VMs placed elsewhere and being recreated there.
	Moving []*ent.VirtualMachine
}

// Unmovable is a VM a drain cannot move.
type Unmovable struct {
	VM     *ent.VirtualMachine
	Reason string
}

// Drain cordons the node and moves its VMs elsewhere, in the caller's transaction (c is
// its client): it opens an automatic Maintenance record linked to the node, sets the
// node's drainState DRAINING with drainDeadline now+timeout and a drainMessage naming
// first the VMs that cannot move and why, and moves the others cold: placement.Placer.Move
// re-places each (without charging its tenant's quota again), then retire asks the node's
// agent to remove the old copy; the node monitor's Progress recreates it on its new node once
// the agent confirmed, and later marks the drain DRAINED or FAILED. The VMs that cannot
// move are recorded up front (drainUnmovable) and not waited for: once every other VM has
// moved, the drain ends FAILED at once, naming them, instead of at its deadline.
//
// A node that reported once and is not READY now cannot confirm anything: draining it is
// VALIDATION on field force unless force is set, which says the node is fenced or an operator accepts that a
// VM may run twice; a forced drain recreates the VMs without waiting. Draining a node
// that is draining returns the running drain (no second maintenance record, also when the
// calls race: the database admits one); with force it also makes that drain forced.
func Drain(ctx context.Context, c *ent.Client, p *placement.Placer, id int, timeout time.Duration, force bool, now time.Time) (*Report, error) {
	n, err := loadNode(ctx, c, id)
	if err != nil {
		return nil, err
	}
	if timeout <= 0 {
		return nil, apierr.Validation("timeoutSeconds", "the timeout must be positive")
	}
	sys := authz.SystemContext(ctx, component)
	if draining(n) {
		return running(ctx, c, n, force, now)
	}
	if silent(n) && !force {
		return nil, apierr.Validation("force", "node %s is %s: it cannot confirm that its VMs stopped, so they are not "+
			"started elsewhere; drain it with force: true once it is fenced (powered off), or when running a VM twice is acceptable", n.Name, n.Status)
	}
	who := authz.Actor(ctx)
	reason := n.CordonReason
	if n.Schedulable || reason == "" {
		reason = fmt.Sprintf("draining (by %s)", who)
	}
	// Cordon first: placement then never chooses this node for the VMs it moves. The
	// update is conditional, so the database lets one drain per node start: a concurrent
	// drainNode waits on the node's row, finds it DRAINING and answers with that drain.
	started, err := c.ComputeNode.Update().
		Where(computenode.ID(id), computenode.Or(computenode.DrainStateIsNil(), computenode.DrainStateNEQ(computenode.DrainStateDraining))).
		SetSchedulable(false).SetCordonReason(reason).
		SetDrainState(computenode.DrainStateDraining).SetDrainDeadline(now.Add(timeout)).SetDrainForced(force).
		SetDrainMessage("starting").Save(sys)
	if err != nil {
		return nil, fmt.Errorf("cordon node %s: %w", n.Name, err)
	}
	if started == 0 {
		if n, err = loadNode(ctx, c, id); err != nil {
			return nil, err
		}
		return running(ctx, c, n, force, now)
	}
	title := "Drain of node " + n.Name
	if force {
		title = "Forced drain of node " + n.Name
	}
	m, err := c.Maintenance.Create().SetTitle(clip(title, 256)).
		SetStatus(maintenance.StatusInProgress).SetStartsAt(now).SetEndsAt(now.Add(timeout)).
		SetAutomatic(true).SetOpenedBy(clip(who, 128)).AddNodeIDs(id).Save(sys)
	if err != nil {
		return nil, fmt.Errorf("open maintenance for node %s: %w", n.Name, err)
	}

	vms, err := c.VirtualMachine.Query().Where(virtualmachine.HasNodeWith(computenode.ID(id))).
		Order(ent.Asc(virtualmachine.FieldID)).All(sys)
	if err != nil {
		return nil, fmt.Errorf("VMs of node %s: %w", n.Name, err)
	}
	rep := &Report{Maintenance: m, Moving: []*ent.VirtualMachine{}}
	for _, vm := range vms {
		if vm.Status == virtualmachine.StatusDeleting || vm.Status == virtualmachine.StatusDeleted {
			continue // leaving anyway; Progress waits for it to be gone
		}
		if why := pinned(vm, n.Name); why != "" {
			rep.Unmovable = append(rep.Unmovable, Unmovable{VM: vm, Reason: why})
			continue
		}
		// Volumes live in the node's storage pool: a VM with volumes stays with its data.
		if vols, err := c.Volume.Query().Where(volume.HasVirtualMachineWith(virtualmachine.ID(vm.ID))).Count(sys); err != nil {
			return nil, fmt.Errorf("volumes of VM %s: %w", vm.Name, err)
		} else if vols > 0 {
			rep.Unmovable = append(rep.Unmovable, Unmovable{VM: vm,
				Reason: fmt.Sprintf("%d volume(s) attached, stored on this node: detach them (their data stays here) to move the VM", vols)})
			continue
		}
		mv, err := p.Move(ctx, c, vm.ID)
		if e, ok := apierr.As(err); ok && e.Code == apierr.CodeNoCapacity {
			rep.Unmovable = append(rep.Unmovable, Unmovable{VM: vm, Reason: e.Message})
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("move VM %s: %w", vm.Name, err)
		}
		moved, err := retire(sys, c, vm, mv, now)
		if err != nil {
			return nil, err
		}
		rep.Moving = append(rep.Moving, moved)
	}

	msg := startMessage(rep)
	if err := c.Maintenance.UpdateOne(m).SetDescription(clip(msg, 4096)).Exec(sys); err != nil {
		return nil, fmt.Errorf("describe maintenance %d: %w", m.ID, err)
	}
	unmovable := make([]fieldtype.DrainUnmovable, len(rep.Unmovable))
	for i, u := range rep.Unmovable {
		unmovable[i] = fieldtype.DrainUnmovable{VMID: u.VM.ID, VMName: u.VM.Name, Reason: clip(u.Reason, 1024)}
	}
	if err := c.ComputeNode.UpdateOneID(id).SetDrainMessage(clip(msg, 4096)).SetDrainUnmovable(unmovable).Exec(sys); err != nil {
		return nil, fmt.Errorf("record drain progress: %w", err)
	}
	// A node with nothing left to wait for is drained at once (and a forced drain recreates
	// its VMs now); otherwise the node monitor's Progress moves it on.
	if _, err := progressNode(sys, c, id, now); err != nil {
		return nil, err
	}
	if rep.Node, err = c.ComputeNode.Get(ctx, id); err != nil {
		return nil, err
	}
	if rep.Maintenance, err = c.Maintenance.Get(sys, m.ID); err != nil {
		return nil, err
	}
	return rep, nil
}

// silent reports whether a node's agent reported once and is no longer READY: it may still
// run its VMs without saying so. A node that never sent a heartbeat has no agent that could
// have started anything; it is managed by hand.
func silent(n *ent.ComputeNode) bool {
	return n.Status != computenode.StatusReady && n.LastHeartbeatAt != nil
}

// running is the report of a drain in progress, for a second drainNode: its open
// maintenance record, the VMs moved off the node so far and those still on it. force makes
// the drain forced from now on (and moves it on at once).
func running(ctx context.Context, c *ent.Client, n *ent.ComputeNode, force bool, now time.Time) (*Report, error) {
	sys := authz.SystemContext(ctx, component)
	if force && !n.DrainForced {
		if err := c.ComputeNode.UpdateOneID(n.ID).SetDrainForced(true).Exec(sys); err != nil {
			return nil, fmt.Errorf("force the drain of node %s: %w", n.Name, err)
		}
		if err := noteMaintenance(sys, c, n.ID, "forced by "+authz.Actor(ctx)); err != nil {
			return nil, err
		}
		if _, err := progressNode(sys, c, n.ID, now); err != nil {
			return nil, err
		}
	}
	rep := &Report{Moving: []*ent.VirtualMachine{}}
	open, err := openMaintenance(sys, c, n.ID)
	if err != nil {
		return nil, err
	}
	if len(open) > 0 {
		rep.Maintenance = open[0]
	}
	moving, err := c.VirtualMachine.Query().Where(virtualmachine.HasAssignmentsWith(assignment.HasNodeWith(computenode.ID(n.ID)),
		assignment.DesiredStateEQ(assignment.DesiredStateAbsent)), virtualmachine.HasNodeWith(computenode.IDNEQ(n.ID))).
		Order(ent.Asc(virtualmachine.FieldID)).All(sys)
	if err != nil {
		return nil, fmt.Errorf("VMs moving off node %s: %w", n.Name, err)
	}
	rep.Moving = append(rep.Moving, moving...)
	stay, err := c.VirtualMachine.Query().Where(virtualmachine.HasNodeWith(computenode.ID(n.ID))).
		Order(ent.Asc(virtualmachine.FieldID)).All(sys)
	if err != nil {
		return nil, fmt.Errorf("VMs of node %s: %w", n.Name, err)
	}
	listed := map[int]string{}
	for _, u := range n.DrainUnmovable {
		listed[u.VMID] = u.Reason
	}
	for _, vm := range stay {
		why, ok := listed[vm.ID]
		if !ok {
			why = "still on the node: see the node's drainMessage"
		}
		rep.Unmovable = append(rep.Unmovable, Unmovable{VM: vm, Reason: why})
	}
	if rep.Node, err = c.ComputeNode.Get(ctx, n.ID); err != nil {
		return nil, err
	}
	return rep, nil
}

// pinned says why a VM cannot leave the node because of its schedule policy: its
// nodeNames allow no other node. Empty when it may.
func pinned(vm *ent.VirtualMachine, node string) string {
	names := vm.SchedulePolicy.NodeNames
	if len(names) == 0 || slices.ContainsFunc(names, func(s string) bool { return s != node }) {
		return ""
	}
	return fmt.Sprintf("pinned to node %s by schedulePolicy.nodeNames", node)
}

// startMessage is the drain's first drainMessage: the VMs that cannot move, then those
// moving.
func startMessage(r *Report) string {
	var b strings.Builder
	if len(r.Unmovable) > 0 {
		fmt.Fprintf(&b, "%d VM(s) cannot move: ", len(r.Unmovable))
		for i, u := range r.Unmovable {
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "%s (%s)", u.VM.Name, u.Reason)
		}
		b.WriteString(". ")
	}
	fmt.Fprintf(&b, "moving %d VM(s)", len(r.Moving))
	if len(r.Moving) > 0 {
		b.WriteString(": ")
		for i, vm := range r.Moving {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(vm.Name)
		}
	}
	return b.String()
}
