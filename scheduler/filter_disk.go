package scheduler

// DiskFit rejects nodes without enough free disk (no overcommit).
type DiskFit struct{}

var _ Filter = (*DiskFit)(nil)

// Name implements Filter.
func (DiskFit) Name() string { return "DiskFit" }

// Filter implements Filter.
func (DiskFit) Filter(st *State, n *NodeView) Status {
	if n.FreeDiskGB() < st.Request.Flavor.DiskGB {
		return Reject("INSUFFICIENT_DISK", "not enough free disk")
	}
	return Pass
}
