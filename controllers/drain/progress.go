package drain

import (
	"context"
	"fmt"
	"strings"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/audit"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/store/dbtx"
)

// Progress moves every draining node's drain on once, each in a transaction of its own
// (see progressNode): it recreates on their new nodes the VMs whose old copies are gone, and
// marks a drain DRAINED (its maintenance closed, the torn-down assignments removed) or
// FAILED: at once when only the VMs it listed as unmovable are left, otherwise past its
// deadline, naming the stuck VMs in drainMessage (the maintenance stays open for
// an operator). A drain's end is audited (system:drain). It returns how many drains
// finished. The node monitor's tick runs it: it is the one driver of drain progress (see
// the package documentation).
func Progress(ctx context.Context, c *ent.Client, now time.Time) (int, error) {
	sys := authz.SystemContext(ctx, component)
	ids, err := c.ComputeNode.Query().Where(computenode.DrainStateEQ(computenode.DrainStateDraining)).IDs(sys)
	if err != nil {
		return 0, fmt.Errorf("draining nodes: %w", err)
	}
	finished := 0
	for _, id := range ids {
		var done bool
		_, err := dbtx.Run(sys, c, func(c *ent.Client) error {
			before, err := c.ComputeNode.Get(sys, id)
			if err != nil {
				return fmt.Errorf("read node %d: %w", id, err)
			}
			if done, err = progressNode(sys, c, id, now); err != nil || !done {
				return err
			}
			return auditEnd(sys, c, before)
		})
		if err != nil {
			return finished, fmt.Errorf("drain progress of node %d: %w", id, err)
		}
		if done {
			finished++
		}
	}
	return finished, nil
}

// progressNode moves one draining node's drain on (see Progress) through c, as the
// system in ctx; done reports that the drain finished.
//
// A VM that left the node keeps, until the drain is over, its retired assignment there
// (desired ABSENT). Once that assignment is APPLIED — the node's agent reported the domain
// gone — the VM gets its assignment on its new node (recreate). Only a forced drain
// recreates without that confirmation: its node is fenced, or an operator accepted the risk.
// A drain that is not forced waits for the confirmation whatever the node's status: a node
// that stopped reporting may still be running the VM.
func progressNode(ctx context.Context, c *ent.Client, id int, now time.Time) (done bool, err error) {
	n, err := c.ComputeNode.Get(ctx, id)
	if err != nil {
		return false, err
	}
	if !draining(n) {
		return false, nil
	}
	// The VMs moved away whose new copy is not assigned yet.
	retired := assignment.And(assignment.HasNodeWith(computenode.ID(id)), assignment.DesiredStateEQ(assignment.DesiredStateAbsent))
	moved, err := c.VirtualMachine.Query().
		Where(virtualmachine.HasAssignmentsWith(retired), virtualmachine.HasNodeWith(computenode.IDNEQ(id)),
			virtualmachine.StatusNotIn(virtualmachine.StatusDeleting, virtualmachine.StatusDeleted),
			notAssignedOnItsNode()).
		WithNode().WithAssignments(func(q *ent.AssignmentQuery) { q.Where(retired) }).
		Order(ent.Asc(virtualmachine.FieldID)).All(ctx)
	if err != nil {
		return false, fmt.Errorf("VMs moved off node %s: %w", n.Name, err)
	}
	var teardown []string
	for _, vm := range moved {
		gone := true
		for _, a := range vm.Edges.Assignments {
			gone = gone && a.Status == assignment.StatusApplied
		}
		if !gone && !n.DrainForced {
			teardown = append(teardown, vm.Name)
			continue
		}
		if err := recreate(ctx, c, vm, n); err != nil {
			return false, err
		}
	}
	left, err := c.VirtualMachine.Query().Where(virtualmachine.HasNodeWith(computenode.ID(id))).
		Order(ent.Asc(virtualmachine.FieldID)).Select(virtualmachine.FieldID, virtualmachine.FieldName).All(ctx)
	if err != nil {
		return false, err
	}
	// The VMs the drain listed as unmovable when it started are not waited for.
	unmovable := map[int]string{}
	for _, u := range n.DrainUnmovable {
		unmovable[u.VMID] = u.VMName
	}
	var stuck []string
	for _, vm := range left {
		if _, ok := unmovable[vm.ID]; ok {
			stuck = append(stuck, vm.Name)
		}
	}
	names := make([]string, 0, len(left))
	for _, vm := range left {
		names = append(names, vm.Name)
	}
	waiting := waitingFor(names, teardown)
	switch {
	case len(stuck) > 0 && len(stuck) == len(left) && len(teardown) == 0:
		// Only what cannot move is left, and every moved VM is assigned on its new node:
		// there is nothing to wait for. The node stays cordoned; the retired assignments
		// the agent applied are removed as for a finished drain.
		if _, err := c.Assignment.Delete().Where(retired, assignment.StatusEQ(assignment.StatusApplied),
			assignment.HasVirtualMachineWith(virtualmachine.HasNodeWith(computenode.IDNEQ(id)))).Exec(ctx); err != nil {
			return false, fmt.Errorf("remove torn-down assignments: %w", err)
		}
		msg := clip(fmt.Sprintf("drain failed: %d VM(s) cannot move (see drainUnmovable): %s; every other VM moved off the node",
			len(stuck), strings.Join(stuck, ", ")), 4096)
		if err := c.ComputeNode.UpdateOneID(id).SetDrainState(computenode.DrainStateFailed).
			SetDrainMessage(msg).Exec(ctx); err != nil {
			return false, err
		}
		return true, noteMaintenance(ctx, c, id, msg)
	case waiting == "":
		// Every moved VM is assigned on its new node: the retired assignments its agent
		// applied have served their purpose. Unapplied ones (a forced drain) stay for the
		// agent, which removes the leftover domain if the node comes back.
		if _, err := c.Assignment.Delete().Where(retired, assignment.StatusEQ(assignment.StatusApplied),
			assignment.HasVirtualMachineWith(virtualmachine.HasNodeWith(computenode.IDNEQ(id)))).Exec(ctx); err != nil {
			return false, fmt.Errorf("remove torn-down assignments: %w", err)
		}
		if err := c.ComputeNode.UpdateOneID(id).SetDrainState(computenode.DrainStateDrained).
			SetDrainMessage("drained: every VM moved off the node").Exec(ctx); err != nil {
			return false, err
		}
		return true, closeMaintenance(ctx, c, id, now, "drained at "+now.UTC().Format(time.RFC3339))
	case n.DrainDeadline != nil && now.After(*n.DrainDeadline):
		msg := clip(fmt.Sprintf("drain failed: timed out at %s; stuck VMs: %s", n.DrainDeadline.UTC().Format(time.RFC3339), waiting), 4096)
		if err := c.ComputeNode.UpdateOneID(id).SetDrainState(computenode.DrainStateFailed).
			SetDrainMessage(msg).Exec(ctx); err != nil {
			return false, err
		}
		return true, noteMaintenance(ctx, c, id, msg)
	default:
		msg := clip("draining; waiting for "+waiting, 4096)
		if msg == n.DrainMessage {
			return false, nil
		}
		return false, c.ComputeNode.UpdateOneID(id).SetDrainMessage(msg).Exec(ctx)
	}
}

// auditEnd writes, through c (the transaction of the change), the audit row of a drain
// progressNode just ended: finishNodeDrain or failNodeDrain as system:drain; before is the
// node as it was. A drain that ends inside Drain is part of its caller's change (drainNode,
// autoDrainNode) and audited with it.
func auditEnd(ctx context.Context, c *ent.Client, before *ent.ComputeNode) error {
	after, err := c.ComputeNode.Get(ctx, before.ID)
	if err != nil {
		return fmt.Errorf("read node %s back: %w", before.Name, err)
	}
	action := "finishNodeDrain"
	if after.DrainState != nil && *after.DrainState == computenode.DrainStateFailed {
		action = "failNodeDrain"
	}
	return audit.Write(ctx, c, audit.Entry{System: audit.Drain, Action: action, Subject: after,
		Before: before, After: after})
}

// notAssignedOnItsNode keeps the VMs without an assignment on the node they are placed on.
func notAssignedOnItsNode() func(*sql.Selector) {
	return func(s *sql.Selector) {
		t := sql.Table(assignment.Table)
		s.Where(sql.NotExists(sql.Select(t.C(assignment.FieldID)).From(t).Where(sql.And(
			sql.ColumnsEQ(t.C(assignment.VirtualMachineColumn), s.C(virtualmachine.FieldID)),
			sql.ColumnsEQ(t.C(assignment.NodeColumn), s.C(virtualmachine.NodeColumn)),
		))))
	}
}

// waitingFor names what a drain still waits for; empty when nothing.
func waitingFor(left, teardown []string) string {
	var parts []string
	if len(left) > 0 {
		parts = append(parts, fmt.Sprintf("%s (still on the node)", strings.Join(left, ", ")))
	}
	if len(teardown) > 0 {
		parts = append(parts, fmt.Sprintf("%s (old copy not torn down yet: recreated elsewhere once it is)", strings.Join(teardown, ", ")))
	}
	return strings.Join(parts, "; ")
}

// noteMaintenance appends a note to the open automatic maintenance of a node's drain.
func noteMaintenance(ctx context.Context, c *ent.Client, nodeID int, note string) error {
	ms, err := openMaintenance(ctx, c, nodeID)
	if err != nil {
		return err
	}
	for _, m := range ms {
		desc := note
		if m.Description != "" {
			desc = m.Description + "\n" + note
		}
		if err := c.Maintenance.UpdateOne(m).SetDescription(clip(desc, 4096)).Exec(ctx); err != nil {
			return fmt.Errorf("note on maintenance %d: %w", m.ID, err)
		}
	}
	return nil
}
