package nodemonitor

import (
	"context"
	"fmt"
	"time"

	"github.com/virtflow/virtflow/controllers/alerting"
	"github.com/virtflow/virtflow/controllers/drain"
	"github.com/virtflow/virtflow/domain/audit"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/event"
)

// AutoDrainTimeout bounds an automatic drain, like drainNode's default.
const AutoDrainTimeout = drain.DefaultTimeout

// autoDrain drains the nodes that asked for it (autoDrain) once they have been silent for
// their autoDrainIntervalSeconds and are no longer READY: the operator chose, for these nodes,
// that their VMs are recreated elsewhere rather than waited for — that choice is the
// operator's say-so a drain of a silent node needs, so the drain is forced (drain.Drain):
// the VMs start elsewhere without the node confirming they stopped. A node is drained
// automatically once: one with a drain state (draining, drained or failed) is left to the
// operator, who uncordons it to make it eligible again. Each drain runs in its own
// transaction with an Event naming what it did and an audit row (autoDrainNode); a drain that cannot start (say, the node was
// drained by hand a moment before) is logged and retried on the next tick.
func (m *Monitor) autoDrain(ctx context.Context, now time.Time) (int, error) {
	nodes, err := m.client.ComputeNode.Query().
		Where(computenode.AutoDrain(true), computenode.DrainStateIsNil(), computenode.StatusNEQ(computenode.StatusReady),
				computenode.LastHeartbeatAtNotNil()).
		All(ctx) // whole rows: each is the before image of its audit row
	if err != nil {
		return 0, fmt.Errorf("auto-drain candidates: %w", err)
	}
	p := m.cfg.Placer
	n := 0
	for _, node := range nodes {
		if !node.LastHeartbeatAt.Before(now.Add(-time.Duration(node.AutoDrainIntervalSeconds) * time.Second)) {
			continue
		}
		_, err := m.inTx(ctx, func(c *ent.Client) (bool, error) {
			rep, err := drain.Drain(ctx, c, p, node.ID, AutoDrainTimeout, true, now)
			if err != nil {
				return false, err
			}
			out := fmt.Sprintf("node %s auto-drained: no heartbeat since %s; %d VMs moving, %d cannot move",
				node.Name, node.LastHeartbeatAt.UTC().Format(time.RFC3339), len(rep.Moving), len(rep.Unmovable))
			if err := audit.Write(ctx, c, audit.Entry{System: audit.NodeMonitor, Action: "autoDrainNode",
				Subject: rep.Node, Before: node, After: rep.Node}); err != nil {
				return false, err
			}
			_, err = alerting.Record(ctx, c, c.Event.Create().SetCheckName(EventCheck).SetStatus(event.StatusWarning).SetSource("nodemonitor").
				SetOutput(out).SetFirstSeenAt(now).SetLastSeenAt(now).SetNodeID(node.ID))
			return true, err
		})
		if err != nil {
			m.log.Error("auto-drain", "node", node.Name, "err", err)
			continue
		}
		n++
		m.log.Warn("node auto-drained", "node", node.Name)
	}
	return n, nil
}
