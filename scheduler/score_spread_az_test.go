package scheduler

import "testing"

func TestSpreadAZ(t *testing.T) {
	in := func(id int, az string) Node { return with(bigNode(id), func(n *Node) { n.AvailabilityZone = az }) }
	tests := []struct {
		name          string
		node          Node
		placed, group []Node
		az            map[string]*azLoad
		out           float64
	}{
		{"first VM, unknown load", in(1, "a"), nil, nil, nil, 100},
		{"AZ already holds the group", in(1, "a"), []Node{in(2, "a")}, nil, nil, 50},
		{"half the group there", in(1, "a"), []Node{in(2, "a"), in(3, "b")}, nil, nil, 75},
		{"AZ three quarters used", in(1, "a"), nil, nil, map[string]*azLoad{"a": {capacity: 100, used: 75}}, 62.5},
		{"running member in the AZ", in(1, "a"), nil, []Node{in(4, "a")}, nil, 50},
		{"running and placed members", in(1, "a"), []Node{in(2, "b")}, []Node{in(4, "a"), in(5, "c")}, nil, 100 * (1 - 1.0/3 + 1) / 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := testState(groupSnapshot(tc.group, nil, Request{Flavor: Flavor{VCPUs: 1}}))
			st.az = tc.az
			for i := range tc.placed {
				v := newNodeView(&tc.placed[i])
				st.placed = append(st.placed, &v)
			}
			v := newNodeView(&tc.node)
			if got := (SpreadAZ{}).Score(st, &v); !near(got, tc.out) {
				t.Fatalf("got %v, want %v", got, tc.out)
			}
			// The batch form reads the AZ loads of the cluster (not tc.az): compare it
			// with Score in the same state.
			checkBatchScore(t, SpreadAZ{}, tc.node, *st.Request, tc.placed, tc.group)
		})
	}
}
