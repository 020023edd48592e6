package scheduler

import "testing"

func TestMemoryFit(t *testing.T) {
	used := func(mb int64) Node { return with(bigNode(1), func(n *Node) { n.MemoryAllocatedMB = mb }) }
	runFilterCases(t, MemoryFit{}, []filterCase{
		{name: "room", node: used(0)},
		{name: "exactly fits", node: used(65536 - 4096)},
		{name: "short", node: used(65536 - 4095), want: "INSUFFICIENT_MEMORY"},
	})
}
