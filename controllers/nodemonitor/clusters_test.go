package nodemonitor_test

import (
	"testing"
	"time"

	"github.com/virtflow/virtflow/controllers/nodemonitor"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent/cluster"
	"github.com/virtflow/virtflow/ent/event"
)

// TestClusterWatch: when every node of a cluster falls silent the monitor — outside the
// cluster — files one CRITICAL cluster-heartbeat event on it (not again on the next tick);
// a cluster with one node still READY gets none; one node READY again files the SUCCESS.
func TestClusterWatch(t *testing.T) {
	c := openDB(t)
	ctx := placementtest.Ctx()
	s, err := placementtest.Build(ctx, c, placementtest.Spec{Racks: 1, HostsPerRack: 2, CPU: 8, MemoryMB: 8192, DiskGB: 100, Cores: 4})
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.AddCluster(ctx, "b", 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	ob, err := s.AddNodes(ctx, other, placementtest.Spec{Racks: 1, HostsPerRack: 2, CPU: 8, MemoryMB: 8192, DiskGB: 100, Cores: 4})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, n := range s.Nodes {
		c.ComputeNode.UpdateOneID(n.ID).SetStatus("READY").SetLastHeartbeatAt(now.Add(-10 * time.Minute)).ExecX(ctx)
	}
	c.ComputeNode.UpdateOneID(ob[0].ID).SetStatus("READY").SetLastHeartbeatAt(now.Add(-10 * time.Minute)).ExecX(ctx)
	c.ComputeNode.UpdateOneID(ob[1].ID).SetStatus("READY").SetLastHeartbeatAt(now).ExecX(ctx)
	m := nodemonitor.New(c, nodemonitor.Config{Now: func() time.Time { return now }}, quiet())
	for range 2 {
		if _, err := m.Tick(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// The database is shared with the package's other tests: look at this test's clusters.
	evs := c.Event.Query().Where(event.CheckName(nodemonitor.ClusterCheck), event.HasClusterWith(cluster.IDIn(s.Cluster, other))).
		WithCluster().AllX(ctx)
	if len(evs) != 1 || evs[0].Status != event.StatusCritical || evs[0].Edges.Cluster == nil || evs[0].Edges.Cluster.ID != s.Cluster {
		t.Fatalf("cluster events %+v, want one CRITICAL on cluster a", evs)
	}
	c.ComputeNode.UpdateOneID(s.Nodes[0].ID).SetStatus("READY").SetLastHeartbeatAt(now).ExecX(ctx)
	if _, err := m.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	last := c.Event.Query().Where(event.CheckName(nodemonitor.ClusterCheck), event.HasClusterWith(cluster.ID(s.Cluster))).
		Order(event.ByID()).AllX(ctx)
	if len(last) != 2 || last[1].Status != event.StatusSuccess {
		t.Errorf("after a node came back: %d events, last %+v, want a SUCCESS", len(last), last[len(last)-1])
	}
}
