package scheduler

import "testing"

func TestExclusive(t *testing.T) {
	numa := func(n *Node) {
		n.NUMANodes = []NUMANode{{ID: 0, CPUs: 8, MemoryMB: 32 << 10}, {ID: 1, CPUs: 8, MemoryMB: 32 << 10}}
	}
	busy := func(n *Node) { n.CPUAllocated, n.MemoryAllocatedMB = 2, 1024 }
	host := Flavor{VCPUs: 8, MemoryMB: 1024, Exclusive: ExclusiveHost}
	cell := Flavor{VCPUs: 8, MemoryMB: 1024, Exclusive: ExclusiveNUMANode}
	big := Flavor{VCPUs: 9, MemoryMB: 1024, Exclusive: ExclusiveNUMANode}
	runFilterCases(t, Exclusive{}, []filterCase{
		{name: "shared on a free node", node: bigNode(1)},
		{name: "shared beside a HOST VM", node: with(bigNode(1), func(n *Node) { n.ExclusiveMask = ExclusiveHostBit }), want: "EXCLUSIVE_HELD"},
		{name: "shared beside a NUMA VM", node: with(bigNode(1), func(n *Node) { n.ExclusiveMask = NUMABit(0) }), want: "EXCLUSIVE_HELD"},
		{name: "HOST on an empty node", node: bigNode(1), req: Request{Flavor: host}},
		{name: "HOST beside a shared VM", node: with(bigNode(1), busy), req: Request{Flavor: host}, want: "NODE_NOT_EMPTY"},
		{name: "HOST beside a NUMA VM", node: with(bigNode(1), func(n *Node) { numa(n); n.ExclusiveMask = NUMABit(1) }),
			req: Request{Flavor: host}, want: "NODE_NOT_EMPTY"},
		{name: "NUMA without topology", node: bigNode(1), req: Request{Flavor: cell}, want: "NO_NUMA_TOPOLOGY"},
		{name: "NUMA on an empty node", node: with(bigNode(1), numa), req: Request{Flavor: cell}},
		{name: "NUMA beside a NUMA VM", node: with(bigNode(1), func(n *Node) { numa(n); busy(n); n.ExclusiveMask = NUMABit(0) }),
			req: Request{Flavor: cell}},
		{name: "NUMA on a full node", node: with(bigNode(1), func(n *Node) { numa(n); busy(n); n.ExclusiveMask = NUMABit(0) | NUMABit(1) }),
			req: Request{Flavor: cell}, want: "NO_FREE_NUMA_NODE"},
		{name: "NUMA beside a shared VM", node: with(bigNode(1), func(n *Node) { numa(n); busy(n) }), req: Request{Flavor: cell}, want: "NODE_NOT_EMPTY"},
		{name: "NUMA beside a HOST VM", node: with(bigNode(1), func(n *Node) { numa(n); busy(n); n.ExclusiveMask = ExclusiveHostBit }),
			req: Request{Flavor: cell}, want: "NODE_NOT_EMPTY"},
		{name: "NUMA larger than a NUMA node", node: with(bigNode(1), numa), req: Request{Flavor: big}, want: "NO_FREE_NUMA_NODE"},
	})
	n := with(bigNode(1), func(n *Node) { numa(n); n.ExclusiveMask = NUMABit(0) })
	if id, ok := FreeNUMANode(cell, &n); !ok || id != 1 {
		t.Errorf("FreeNUMANode = %d, %v; want 1", id, ok)
	}
}
