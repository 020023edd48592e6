package scheduler

import "testing"

func TestNodeLabelHardAntiAffinity(t *testing.T) {
	old := with(bigNode(1), func(n *Node) { n.Labels = map[string]string{"gen": "old", "ssd": "no"} })
	avoid := func(l map[string]string) Request { return Request{Policy: Policy{NodeLabelHardAntiAffinities: l}} }
	runFilterCases(t, NodeLabelHardAntiAffinity{}, []filterCase{
		{name: "no rule", node: old},
		{name: "one forbidden pair", node: old, req: avoid(map[string]string{"gen": "old", "x": "y"}), want: "LABEL_ANTI_AFFINITY"},
		{name: "same key other value", node: old, req: avoid(map[string]string{"gen": "new"})},
		{name: "no labels", node: bigNode(1), req: avoid(map[string]string{"gen": "old"})},
	})
}
