package scheduler

// MemoryFit rejects nodes without enough free memory (no overcommit).
type MemoryFit struct{}

var _ Filter = (*MemoryFit)(nil)

// Name implements Filter.
func (MemoryFit) Name() string { return "MemoryFit" }

// Filter implements Filter.
func (MemoryFit) Filter(st *State, n *NodeView) Status {
	if n.FreeMemoryMB() < st.Request.Flavor.MemoryMB {
		return Reject("INSUFFICIENT_MEMORY", "not enough free memory")
	}
	return Pass
}
