package drain

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/virtflow/virtflow/audit"
	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// Progress checks every draining node once, each in a transaction of its own: a node with
// no VMs left and every old copy torn down becomes DRAINED and its maintenance closes;
// a node past its drainDeadline becomes FAILED, naming the stuck VMs in drainMessage (the
// maintenance stays open for an operator); others get their drainMessage brought up to
// date. A drain's end is audited (system:drain). It returns how many nodes finished
// (drained or failed). The node monitor runs it.
func Progress(ctx context.Context, c *ent.Client, now time.Time) (int, error) {
	sys := authz.SystemContext(ctx, component)
	ids, err := c.ComputeNode.Query().Where(computenode.DrainStateEQ(computenode.DrainStateDraining)).IDs(sys)
	if err != nil {
		return 0, fmt.Errorf("draining nodes: %w", err)
	}
	finished := 0
	for _, id := range ids {
		tx, err := c.Tx(sys)
		if err != nil {
			return finished, err
		}
		before, err := tx.Client().ComputeNode.Get(sys, id)
		if err != nil {
			_ = tx.Rollback()
			return finished, fmt.Errorf("read node %d: %w", id, err)
		}
		done, err := progressNode(sys, tx.Client(), id, now)
		if err == nil && done {
			err = auditEnd(sys, tx.Client(), before)
		}
		if err != nil {
			_ = tx.Rollback()
			return finished, fmt.Errorf("drain progress of node %d: %w", id, err)
		}
		if err := tx.Commit(); err != nil {
			return finished, err
		}
		if done {
			finished++
		}
	}
	return finished, nil
}

// progressNode moves one draining node's drain on (see Progress) through c, as the
// system in ctx; done reports that the drain finished.
func progressNode(ctx context.Context, c *ent.Client, id int, now time.Time) (done bool, err error) {
	n, err := c.ComputeNode.Get(ctx, id)
	if err != nil {
		return false, err
	}
	if !draining(n) {
		return false, nil
	}
	left, err := c.VirtualMachine.Query().Where(virtualmachine.HasNodeWith(computenode.ID(id))).
		Order(ent.Asc(virtualmachine.FieldID)).Select(virtualmachine.FieldName).Strings(ctx)
	if err != nil {
		return false, err
	}
	// Old copies matter only while the node's agent can remove them; a node that is not
	// READY has its leftovers removed by its agent's resync when it returns.
	var teardown []string
	if n.Status == computenode.StatusReady {
		teardown, err = c.VirtualMachine.Query().Where(virtualmachine.HasAssignmentsWith(
			assignment.HasNodeWith(computenode.ID(id)), assignment.DesiredStateEQ(assignment.DesiredStateAbsent),
			assignment.StatusNEQ(assignment.StatusApplied))).
			Order(ent.Asc(virtualmachine.FieldID)).Select(virtualmachine.FieldName).Strings(ctx)
		if err != nil {
			return false, err
		}
	}
	waiting := waitingFor(left, teardown)
	switch {
	case waiting == "":
		// The old copies are gone: their assignments have served their purpose.
		if _, err := c.Assignment.Delete().Where(assignment.HasNodeWith(computenode.ID(id)),
			assignment.DesiredStateEQ(assignment.DesiredStateAbsent), assignment.StatusEQ(assignment.StatusApplied),
			assignment.HasVirtualMachineWith(virtualmachine.Not(virtualmachine.HasNodeWith(computenode.ID(id))))).Exec(ctx); err != nil {
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

// waitingFor names what a drain still waits for; empty when nothing.
func waitingFor(left, teardown []string) string {
	var parts []string
	if len(left) > 0 {
		parts = append(parts, fmt.Sprintf("%s (still on the node)", strings.Join(left, ", ")))
	}
	if len(teardown) > 0 {
		parts = append(parts, fmt.Sprintf("%s (old copy not torn down yet)", strings.Join(teardown, ", ")))
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
