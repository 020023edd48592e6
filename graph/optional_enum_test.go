package graph_test

import (
	"encoding/json"
	"testing"

	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent/eventrule"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// TestUnsetOptionalEnumsAreNull: an optional enum field that was never set reads as null,
// never as "" (which is no value of the enum and breaks strict GraphQL clients): a server's
// fabric role, a never-drained node's drain state, an event rule's status match, action and
// alert severity.
func TestUnsetOptionalEnumsAreNull(t *testing.T) {
	t.Parallel()
	env, _ := newEnv(t)
	ctx := gqltest.System()
	s, err := placementtest.Build(ctx, env.Client, placementtest.Spec{Racks: 1, HostsPerRack: 1, CPU: 4, MemoryMB: 4096, DiskGB: 10, Cores: 2})
	if err != nil {
		t.Fatal(err)
	}
	rule := env.Client.EventRule.Create().SetName(uniq("rule")).SetKind(eventrule.KindFilter).SaveX(ctx)
	node := env.Client.ComputeNode.GetX(ctx, s.Nodes[0].ID)
	hostID := env.Client.ComputeNode.QueryHost(node).OnlyIDX(ctx)

	var out struct {
		Host, Node, Rule map[string]json.RawMessage
	}
	env.MustDo(t, `query($h: ID!, $n: ID!, $r: ID!) {
		host: node(id: $h) { ... on Host { role } }
		node: node(id: $n) { ... on ComputeNode { drainState } }
		rule: node(id: $r) { ... on EventRule { statusMatch action alertSeverity } } }`,
		map[string]any{"h": gqltest.ID(hostID), "n": gqltest.ID(node.ID), "r": gqltest.ID(rule.ID)}, &out)
	for what, fields := range map[string]map[string]json.RawMessage{"host": out.Host, "node": out.Node, "rule": out.Rule} {
		if len(fields) == 0 {
			t.Errorf("%s: no fields in the answer", what)
		}
		for f, v := range fields {
			if string(v) != "null" {
				t.Errorf("%s.%s = %s, want null", what, f, v)
			}
		}
	}
}
