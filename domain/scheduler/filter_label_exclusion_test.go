package scheduler

import "testing"

func TestNodeLabelExclusion(t *testing.T) {
	old := with(bigNode(1), func(n *Node) { n.Labels = map[string]string{"gen": "old", "ssd": "no"} })
	avoid := func(l map[string]string) Request { return Request{Policy: Policy{NodeLabelHardExclusions: l}} }
	runFilterCases(t, NodeLabelExclusion{}, []filterCase{
		{name: "no rule", node: old},
		{name: "one excluded pair", node: old, req: avoid(map[string]string{"gen": "old", "x": "y"}), want: "LABEL_EXCLUDED"},
		{name: "same key other value", node: old, req: avoid(map[string]string{"gen": "new"})},
		{name: "no labels", node: bigNode(1), req: avoid(map[string]string{"gen": "old"})},
	})
}
