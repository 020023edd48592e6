package scheduler

import "testing"

func TestAllocatedScorers(t *testing.T) {
	node := func(cpuUsed int, memUsed int64) Node {
		return with(bigNode(1), func(n *Node) {
			n.CPUCapacity, n.CPUAllocated, n.MemoryMB, n.MemoryAllocatedMB = 10, cpuUsed, 1000, memUsed
		})
	}
	flavor := Flavor{VCPUs: 1, MemoryMB: 100}
	tests := []struct {
		name        string
		node        Node
		least, most float64
	}{
		{"empty", node(0, 0), 90, 10},
		{"half used", node(4, 400), 50, 50},
		{"full after placing", node(9, 900), 0, 100},
		{"cpu and memory differ", node(9, 0), 45, 55},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Request{Flavor: flavor}
			if got := scoreOf(LeastAllocated{}, tc.node, r, nil, nil); !near(got, tc.least) {
				t.Errorf("LeastAllocated = %v, want %v", got, tc.least)
			}
			if got := scoreOf(MostAllocated{}, tc.node, r, nil, nil); !near(got, tc.most) {
				t.Errorf("MostAllocated = %v, want %v", got, tc.most)
			}
		})
	}
}

func near(a, b float64) bool { d := a - b; return d < 1e-9 && d > -1e-9 }
