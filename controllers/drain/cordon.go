package drain

import (
	"context"
	"fmt"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/maintenance"
	"github.com/virtflow/virtflow/store/truncate"
)

// Cordon stops new placements on a node; its VMs keep running. Cordoning a cordoned node
// changes nothing but the reason, when one is given.
func Cordon(ctx context.Context, c *ent.Client, id int, reason *string) (*ent.ComputeNode, error) {
	n, err := loadNode(ctx, c, id)
	if err != nil {
		return nil, err
	}
	why := fmt.Sprintf("cordoned by %s", authz.Actor(ctx))
	if reason != nil && *reason != "" {
		why = *reason
	} else if !n.Schedulable && n.CordonReason != "" {
		why = n.CordonReason
	}
	if !n.Schedulable && n.CordonReason == why {
		return n, nil
	}
	return c.ComputeNode.UpdateOneID(id).SetSchedulable(false).SetCordonReason(why).
		Save(authz.SystemContext(ctx, component))
}

// Uncordon allows placements on a node again. It ends the node's drain, whatever its
// state: a finished or failed one is cleared, a running one is abandoned (VMs already moved
// stay where they are), and the drain's open maintenance record is closed. Uncordoning a
// schedulable node without a drain changes nothing.
func Uncordon(ctx context.Context, c *ent.Client, id int) (*ent.ComputeNode, error) {
	n, err := loadNode(ctx, c, id)
	if err != nil {
		return nil, err
	}
	if n.Schedulable && n.DrainState == nil {
		return n, nil
	}
	sys := authz.SystemContext(ctx, component)
	u := c.ComputeNode.UpdateOneID(id).SetSchedulable(true).ClearCordonReason()
	if n.DrainState != nil {
		u.ClearDrainState().ClearDrainDeadline().
			SetDrainMessage(fmt.Sprintf("drain ended (%s) by %s uncordoning the node", *n.DrainState, authz.Actor(ctx)))
		err := closeMaintenance(sys, c, id, time.Now(), fmt.Sprintf("ended by %s uncordoning the node", authz.Actor(ctx)))
		if err != nil {
			return nil, err
		}
	}
	return u.Save(sys)
}

// closeMaintenance closes the open automatic maintenance records of a node's drains,
// noting why.
func closeMaintenance(ctx context.Context, c *ent.Client, nodeID int, now time.Time, note string) error {
	open, err := openMaintenance(ctx, c, nodeID)
	if err != nil {
		return err
	}
	for _, m := range open {
		desc := note
		if m.Description != "" {
			desc = m.Description + "\n" + note
		}
		// The database may have rounded the start up (PostgreSQL keeps microseconds).
		end := now
		if end.Before(m.StartsAt) {
			end = m.StartsAt
		}
		if err := c.Maintenance.UpdateOne(m).SetStatus(maintenance.StatusClosed).SetEndsAt(end).
			SetDescription(clip(desc, 4096)).Exec(ctx); err != nil {
			return fmt.Errorf("close maintenance %d: %w", m.ID, err)
		}
	}
	return nil
}

// openMaintenance are the open automatic maintenance records of a node's drains.
func openMaintenance(ctx context.Context, c *ent.Client, nodeID int) ([]*ent.Maintenance, error) {
	ms, err := c.Maintenance.Query().Where(maintenance.Automatic(true), maintenance.StatusNEQ(maintenance.StatusClosed),
		maintenance.HasNodesWith(computenode.ID(nodeID))).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("open maintenance of node %d: %w", nodeID, err)
	}
	return ms, nil
}

// clip cuts s to at most n bytes (truncate.String).
func clip(s string, n int) string { return truncate.String(s, n) }
