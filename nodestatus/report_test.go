package nodestatus_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/internal/infra"
	"github.com/virtflow/virtflow/internal/testdb"
	"github.com/virtflow/virtflow/nodestatus"
	"github.com/virtflow/virtflow/placement/placementtest"
)

// TestMain gives the package its own PostgreSQL database.
func TestMain(m *testing.M) { testdb.Main(m) }

// TestApply sends heartbeats through Apply against PostgreSQL: status transitions, the routine
// heartbeat that changes nothing but the time (so package graph writes no audit row for it),
// a cordon request, and an unhealthy message longer than the reason column with a multi-byte
// character at the cut.
func TestApply(t *testing.T) {
	ctx := placementtest.Ctx()
	db, err := infra.OpenDatabase(ctx, testdb.DSN(t), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	c := db.Client
	site, err := placementtest.Build(ctx, c, placementtest.Spec{Racks: 1, HostsPerRack: 1, CPU: 8, MemoryMB: 16384, DiskGB: 100})
	if err != nil {
		t.Fatal(err)
	}
	node := site.Nodes[0].ID
	c.ComputeNode.UpdateOneID(node).SetAutoCordon(true).ExecX(ctx)
	at := time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)
	str := func(s string) *string { return &s }
	yes := true

	for i, step := range []struct {
		name        string
		r           nodestatus.Report
		wantChanged bool
		wantStatus  computenode.Status
		wantReason  string
		check       func(t *testing.T)
	}{
		{name: "healthy", r: nodestatus.Report{Healthy: true, AgentVersion: str("1.0")}, wantChanged: true, wantStatus: computenode.StatusReady},
		{name: "routine", r: nodestatus.Report{Healthy: true, AgentVersion: str("1.0")}, wantStatus: computenode.StatusReady},
		{name: "routine, only the id asked for", r: nodestatus.Report{Healthy: true, IDOnly: true}, wantStatus: computenode.StatusReady},
		{name: "unhealthy", r: nodestatus.Report{Message: str("  disk failing  ")}, wantChanged: true,
			wantStatus: computenode.StatusNotReady, wantReason: "disk failing"},
		{name: "unhealthy again, same message", r: nodestatus.Report{Message: str("disk failing")},
			wantStatus: computenode.StatusNotReady, wantReason: "disk failing"},
		{name: "a long message cut at a character", r: nodestatus.Report{Message: str(strings.Repeat("x", 1023) + "éé")}, wantChanged: true,
			wantStatus: computenode.StatusNotReady, wantReason: strings.Repeat("x", 1021) + "…"},
		{name: "cordon request", r: nodestatus.Report{Healthy: true, RequestCordon: &yes, Message: str("ECC errors")}, wantChanged: true,
			wantStatus: computenode.StatusReady, check: func(t *testing.T) {
				n := c.ComputeNode.GetX(ctx, node)
				if n.Schedulable || n.CordonReason != "ECC errors" {
					t.Errorf("schedulable %v, cordon reason %q; want cordoned for ECC errors", n.Schedulable, n.CordonReason)
				}
			}},
		{name: "healthy again", r: nodestatus.Report{Healthy: true}, wantStatus: computenode.StatusReady},
	} {
		t.Run(step.name, func(t *testing.T) {
			step.r.NodeID = node
			step.r.At = at.Add(time.Duration(i) * 10 * time.Second)
			before := c.ComputeNode.GetX(ctx, node)
			_, changed, err := nodestatus.Apply(ctx, c, step.r)
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			n := c.ComputeNode.GetX(ctx, node)
			if changed != step.wantChanged || n.Status != step.wantStatus || n.StatusReason != step.wantReason {
				t.Fatalf("changed %v, %s %q; want %v, %s %q", changed, n.Status, n.StatusReason, step.wantChanged, step.wantStatus, step.wantReason)
			}
			if !utf8.ValidString(n.StatusReason) || len(n.StatusReason) > 1024 {
				t.Fatalf("reason of %d bytes, valid UTF-8 %v", len(n.StatusReason), utf8.ValidString(n.StatusReason))
			}
			if n.LastHeartbeatAt == nil || !n.LastHeartbeatAt.Equal(step.r.At) {
				t.Fatalf("last heartbeat %v, want the report's time %s", n.LastHeartbeatAt, step.r.At)
			}
			if !changed && (n.Status != before.Status || n.StatusReason != before.StatusReason || n.AgentVersion != before.AgentVersion) {
				t.Fatal("an unchanged heartbeat changed the node")
			}
			if step.check != nil {
				step.check(t)
			}
		})
	}
	// Another node's heartbeat id that does not exist is NOT_FOUND, not a silent no-op.
	if _, _, err := nodestatus.Apply(ctx, c, nodestatus.Report{NodeID: node + 1_000_000, Healthy: true}); err == nil {
		t.Fatal("a heartbeat for a node that does not exist succeeded")
	}
}
