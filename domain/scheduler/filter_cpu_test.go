package scheduler

import "testing"

func TestCPUFit(t *testing.T) {
	full := func(used int) Node { return with(bigNode(1), func(n *Node) { n.CPUAllocated = used }) }
	dedicated := Flavor{VCPUs: 4, MemoryMB: 1024, DiskGB: 10, Dedicated: true}
	runFilterCases(t, CPUFit{}, []filterCase{
		{name: "room", node: full(0)},
		{name: "exactly fits", node: full(30)},
		{name: "one core short", node: full(31), want: "INSUFFICIENT_CPU"},
		{name: "dedicated fits", node: bigNode(1), req: Request{Flavor: dedicated}},
		{name: "dedicated short", node: with(bigNode(1), func(n *Node) { n.DedicatedCoresFree = 3 }),
			req: Request{Flavor: dedicated}, want: "INSUFFICIENT_DEDICATED_CPU"},
	})
}

// TestCPUFitScratch checks the scratch copy: a node that took a VM of the group has less room.
func TestCPUFitScratch(t *testing.T) {
	n := with(bigNode(1), func(n *Node) { n.CPUAllocated = 29 })
	a := testAttempt(n, Request{Flavor: smallFlavor()}, nil, nil, nil, []Filter{CPUFit{}}, nil)
	if !filterStatus(a, 0).OK() {
		t.Fatal("first VM should fit")
	}
	a.place(0)
	if filterStatus(a, 0).OK() {
		t.Fatal("second VM should not fit on the same node")
	}
	if a.st.Snapshot.Nodes[0].CPUAllocated != 29 {
		t.Fatal("placing must not modify the snapshot's node")
	}
}
