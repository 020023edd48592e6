package scheduler

import "testing"

func TestSpreadAZ(t *testing.T) {
	in := func(id int, az string) Node { return with(bigNode(id), func(n *Node) { n.AvailabilityZone = az }) }
	tests := []struct {
		name   string
		node   Node
		placed []Node
		az     map[string]*azLoad
		out    float64
	}{
		{"first VM, unknown load", in(1, "a"), nil, nil, 100},
		{"AZ already holds the group", in(1, "a"), []Node{in(2, "a")}, nil, 50},
		{"half the group there", in(1, "a"), []Node{in(2, "a"), in(3, "b")}, nil, 75},
		{"AZ three quarters used", in(1, "a"), nil, map[string]*azLoad{"a": {capacity: 100, used: 75}}, 62.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := testState(nil, Request{Flavor: Flavor{VCPUs: 1}})
			st.az = tc.az
			for i := range tc.placed {
				v := newNodeView(&tc.placed[i])
				st.placed = append(st.placed, &v)
			}
			v := newNodeView(&tc.node)
			if got := (SpreadAZ{}).Score(st, &v); got != tc.out {
				t.Fatalf("got %v, want %v", got, tc.out)
			}
		})
	}
}
