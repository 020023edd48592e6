package scheduler

import "testing"

func TestNodeLabelHardAffinity(t *testing.T) {
	gpu := with(bigNode(1), func(n *Node) { n.Labels = map[string]string{"gpu": "a100", "ssd": "yes"} })
	want := func(l map[string]string) Request { return Request{Policy: Policy{NodeLabelHardAffinities: l}} }
	runFilterCases(t, NodeLabelHardAffinity{}, []filterCase{
		{name: "no rule", node: bigNode(1)},
		{name: "all match", node: gpu, req: want(map[string]string{"gpu": "a100", "ssd": "yes"})},
		{name: "wrong value", node: gpu, req: want(map[string]string{"gpu": "h100"}), want: "LABEL_AFFINITY"},
		{name: "one missing", node: gpu, req: want(map[string]string{"gpu": "a100", "numa": "2"}), want: "LABEL_AFFINITY"},
		{name: "no labels", node: bigNode(1), req: want(map[string]string{"gpu": "a100"}), want: "LABEL_AFFINITY"},
	})
}
