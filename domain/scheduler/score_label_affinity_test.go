package scheduler

import "testing"

func TestNodeLabelSoftAffinity(t *testing.T) {
	labelled := with(bigNode(1), func(n *Node) { n.Labels = map[string]string{"ssd": "yes", "gen": "new"} })
	tests := []struct {
		name string
		node Node
		want map[string]string
		out  float64
	}{
		{"no preference", labelled, nil, 0},
		{"all match", labelled, map[string]string{"ssd": "yes", "gen": "new"}, 100},
		{"half match", labelled, map[string]string{"ssd": "yes", "gen": "old"}, 50},
		{"none match", bigNode(1), map[string]string{"ssd": "yes"}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Request{Flavor: smallFlavor(), Policy: Policy{NodeLabelSoftAffinities: tc.want}}
			if got := scoreOf(NodeLabelSoftAffinity{}, tc.node, r, nil, nil); got != tc.out {
				t.Fatalf("got %v, want %v", got, tc.out)
			}
		})
	}
}
