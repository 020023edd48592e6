package scheduler

import "testing"

func TestDiskFit(t *testing.T) {
	used := func(gb int64) Node { return with(bigNode(1), func(n *Node) { n.DiskAllocatedGB = gb }) }
	runFilterCases(t, DiskFit{}, []filterCase{
		{name: "room", node: used(0)},
		{name: "exactly fits", node: used(980)},
		{name: "short", node: used(981), want: "INSUFFICIENT_DISK"},
	})
}
