package scheduler

// Exclusive keeps exclusive and shared VMs apart. A shared flavor avoids nodes an exclusive
// VM holds (Node.ExclusiveMask). An exclusive HOST flavor needs an empty node (nothing
// allocated, nothing held). An exclusive NUMA_NODE flavor needs a node whose NUMA topology is
// known, with a NUMA node that is free and fits the flavor's vCPUs and memory, on a node
// that is either empty or holds NUMA_NODE VMs only. The commit checks the same in SQL
// (domain/placement/commit.go), so concurrent decisions cannot both take a node.
type Exclusive struct{}

var _ Filter = (*Exclusive)(nil)

var (
	statusExclusiveHeld  = known("EXCLUSIVE_HELD", "an exclusive VM holds the node")
	statusNodeNotEmpty   = known("NODE_NOT_EMPTY", "an exclusive flavor needs a node without other VMs")
	statusNoNUMATopology = known("NO_NUMA_TOPOLOGY", "the node's agent reported no NUMA nodes")
	statusNoFreeNUMANode = known("NO_FREE_NUMA_NODE", "no free NUMA node fits the flavor")
)

// Name implements Filter.
func (Exclusive) Name() string { return "Exclusive" }

func (Exclusive) prepareFilter(*attempt) bool { return true }

func (Exclusive) filterBatch(a *attempt, fi int, cand []int32) []int32 {
	n := 0
	f := a.st.Request.Flavor
	for _, c := range cand {
		node := &a.st.Snapshot.Nodes[a.pos[c]]
		h := &a.hot[c]
		if st, ok := ExclusiveFit(f, node, h.cpuUsed == 0 && h.memUsed == 0 && h.diskUsed == 0); !ok {
			a.reject(c, fi, st.id)
			continue
		}
		cand[n] = c
		n++
	}
	return cand[:n]
}

func (Exclusive) stable() bool { return true }

// ExclusiveFit reports whether f may go on node, empty telling whether nothing is
// allocated on it; the status says why not.
func ExclusiveFit(f Flavor, node *Node, empty bool) (knownStatus, bool) {
	switch f.Exclusive {
	case ExclusiveHost:
		if node.ExclusiveMask != 0 || !empty {
			return statusNodeNotEmpty, false
		}
	case ExclusiveNUMANode:
		if node.ExclusiveMask&ExclusiveHostBit != 0 || (node.ExclusiveMask == 0 && !empty) {
			return statusNodeNotEmpty, false
		}
		if len(node.NUMANodes) == 0 {
			return statusNoNUMATopology, false
		}
		if _, ok := FreeNUMANode(f, node); !ok {
			return statusNoFreeNUMANode, false
		}
	default:
		if node.ExclusiveMask != 0 {
			return statusExclusiveHeld, false
		}
	}
	return knownStatus{}, true
}

// FreeNUMANode is the lowest-id NUMA node of node that no exclusive VM holds and that fits
// f's vCPUs and memory.
func FreeNUMANode(f Flavor, node *Node) (int, bool) {
	best := -1
	for _, nn := range node.NUMANodes {
		if node.ExclusiveMask&NUMABit(nn.ID) != 0 || nn.CPUs < f.VCPUs || nn.MemoryMB < f.MemoryMB {
			continue
		}
		if best < 0 || nn.ID < best {
			best = nn.ID
		}
	}
	return best, best >= 0
}
