package scheduler

import "testing"

func TestSpreadAZ(t *testing.T) {
	// Nodes without CPU capacity leave their AZ's load unknown (free 1), so only the
	// group counts, unless a case gives the node capacity.
	in := func(id int, az string) Node {
		return with(bigNode(id), func(n *Node) { n.AvailabilityZone, n.CPUCapacity = az, 0 })
	}
	tests := []struct {
		name          string
		node          Node
		placed, group []Node
		out           float64
	}{
		{"first VM, unknown load", in(1, "a"), nil, nil, 100},
		{"AZ already holds the group", in(1, "a"), []Node{in(2, "a")}, nil, 50},
		{"half the group there", in(1, "a"), []Node{in(2, "a"), in(3, "b")}, nil, 75},
		{"AZ three quarters used", with(in(1, "a"), func(n *Node) { n.CPUCapacity, n.CPUAllocated = 100, 75 }), nil, nil, 62.5},
		// AZ a: 200 cores, 74 used plus the placed VM's 1.
		{"placed VM uses the AZ's CPU", with(in(1, "a"), func(n *Node) { n.CPUCapacity, n.CPUAllocated = 100, 74 }),
			[]Node{with(in(2, "a"), func(n *Node) { n.CPUCapacity = 100 })}, nil, 100 * (0 + 125.0/200) / 2},
		{"other AZ's load does not count", in(1, "a"),
			[]Node{with(in(2, "b"), func(n *Node) { n.CPUCapacity, n.CPUAllocated = 100, 99 })}, nil, 100},
		{"running member in the AZ", in(1, "a"), nil, []Node{in(4, "a")}, 50},
		{"running and placed members", in(1, "a"), []Node{in(2, "b")}, []Node{in(4, "a"), in(5, "c")}, 100 * (1 - 1.0/3 + 1) / 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := scoreOf(SpreadAZ{}, tc.node, Request{Flavor: Flavor{VCPUs: 1}}, tc.placed, tc.group); !near(got, tc.out) {
				t.Fatalf("got %v, want %v", got, tc.out)
			}
		})
	}
}
