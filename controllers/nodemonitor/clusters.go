package nodemonitor

import (
	"context"
	"fmt"
	"time"

	"github.com/virtflow/virtflow/controllers/alerting"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/cluster"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/event"
)

// ClusterCheck is the check name of the cross-cluster watch's events.
const ClusterCheck = alerting.ClusterHeartbeatCheck

// watchClusters is the cross-cluster watch (seed 001: clusters watch each other so that a
// dead cluster still raises an alert). The monitor runs in the worker holding the lease,
// outside any one cluster: for every cluster that has nodes and none of them READY any
// more — all NOT_READY or DOWN, silent — it files one CRITICAL cluster-heartbeat event on
// the cluster; when a node of it is READY again, a SUCCESS. Only transitions are filed:
// the cluster's latest cluster-heartbeat event says what was last said.
func (m *Monitor) watchClusters(ctx context.Context, now time.Time) (int, error) {
	cls, err := m.client.Cluster.Query().Where(cluster.HasNodes()).
		WithNodes(func(q *ent.ComputeNodeQuery) { q.Select(computenode.FieldStatus) }).All(ctx)
	if err != nil {
		return 0, fmt.Errorf("clusters: %w", err)
	}
	n := 0
	for _, cl := range cls {
		silent, ready := 0, 0
		for _, nd := range cl.Edges.Nodes {
			switch nd.Status {
			case computenode.StatusReady:
				ready++
			case computenode.StatusNotReady, computenode.StatusDown:
				silent++
			}
		}
		dead := ready == 0 && silent == len(cl.Edges.Nodes)
		last, err := m.client.Event.Query().Where(event.CheckName(ClusterCheck), event.HasClusterWith(cluster.ID(cl.ID))).
			Order(ent.Desc(event.FieldID)).First(ctx)
		if err != nil && !ent.IsNotFound(err) {
			return n, fmt.Errorf("cluster %s: last watch event: %w", cl.Name, err)
		}
		wasDead := last != nil && last.Status == event.StatusCritical
		if dead == wasDead || (!dead && last == nil) {
			continue
		}
		st, out := event.StatusSuccess, fmt.Sprintf("cluster %s: %d of %d nodes READY again", cl.Name, ready, len(cl.Edges.Nodes))
		if dead {
			st, out = event.StatusCritical, fmt.Sprintf("cluster %s: all %d nodes silent (NOT_READY or DOWN)", cl.Name, silent)
		}
		_, err = m.inTx(ctx, func(c *ent.Client) (bool, error) {
			_, err := alerting.Record(ctx, c, c.Event.Create().SetCheckName(ClusterCheck).SetStatus(st).SetSource("nodemonitor").
				SetOutput(out).SetFirstSeenAt(now).SetLastSeenAt(now).SetClusterID(cl.ID))
			return err == nil, err
		})
		if err != nil {
			return n, fmt.Errorf("cluster %s: %w", cl.Name, err)
		}
		n++
		m.log.Warn("cluster watch", "cluster", cl.Name, "status", st, "output", out)
	}
	return n, nil
}
