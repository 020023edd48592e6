package scheduler

// Ready rejects nodes that are not up.
type Ready struct{}

var _ Filter = (*Ready)(nil)

// Name implements Filter.
func (Ready) Name() string { return "Ready" }

// Filter implements Filter.
func (Ready) Filter(_ *State, n *NodeView) Status {
	if !n.Ready {
		return Reject("NOT_READY", "node is not ready")
	}
	return Pass
}
