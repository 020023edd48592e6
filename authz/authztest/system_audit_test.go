package authztest

import (
	"os"
	"strings"
	"testing"

	"github.com/virtflow/virtflow/domain/audit"
)

// TestReadmeSystemAuditQuery runs the README's query for what the system did on its own, as
// written there, as an admin: it finds a system actor's row and no user's.
func TestReadmeSystemAuditQuery(t *testing.T) {
	w := newWorld(t)
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "What the system did on its own")
	if !ok {
		t.Fatal("README: the section on what the system did on its own is gone")
	}
	if _, block, ok = strings.Cut(block, "```graphql\n"); !ok {
		t.Fatal("README: the system audit query is gone")
	}
	query, _, _ := strings.Cut(block, "```")

	w.c.AuditLog.Create().SetActor("someone").SetAction("updateRack").SaveX(w.ctx)
	if err := audit.Write(w.ctx, w.c, audit.Entry{System: audit.NodeMonitor, Action: "markNodeDown",
		ObjectType: "ComputeNode", ObjectID: 7}); err != nil {
		t.Fatal(err)
	}
	var out struct {
		AuditLogs struct {
			Edges []struct {
				Node struct{ Actor, Action string }
			}
		}
	}
	mustData(t, w.do(t, w.viewer("admin"), query, nil), &out)
	found := false
	for _, e := range out.AuditLogs.Edges {
		if !strings.HasPrefix(e.Node.Actor, "system:") {
			t.Errorf("row of %s among the system's", e.Node.Actor)
		}
		found = found || (e.Node.Actor == audit.NodeMonitor.Name() && e.Node.Action == "markNodeDown")
	}
	if !found {
		t.Errorf("the system:nodemonitor row is missing from %+v", out.AuditLogs.Edges)
	}
}
