package scheduler

import "testing"

func TestNodeLabelSoftExclusion(t *testing.T) {
	labelled := with(bigNode(1), func(n *Node) { n.Labels = map[string]string{"gen": "old", "noisy": "yes"} })
	tests := []struct {
		name  string
		node  Node
		avoid map[string]string
		out   float64
	}{
		{"no preference", labelled, nil, 0},
		{"avoided pair absent", bigNode(1), map[string]string{"gen": "old"}, 100},
		{"half present", labelled, map[string]string{"gen": "old", "ssd": "no"}, 50},
		{"all present", labelled, map[string]string{"gen": "old", "noisy": "yes"}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Request{Flavor: smallFlavor(), Policy: Policy{NodeLabelSoftExclusions: tc.avoid}}
			if got := scoreOf(NodeLabelSoftExclusion{}, tc.node, r, nil, nil); got != tc.out {
				t.Fatalf("got %v, want %v", got, tc.out)
			}
		})
	}
}
