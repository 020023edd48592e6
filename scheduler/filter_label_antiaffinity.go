package scheduler

// NodeLabelHardAntiAffinity rejects nodes that carry any key=value of the policy's
// NodeLabelHardAntiAffinities.
type NodeLabelHardAntiAffinity struct{}

var _ Filter = (*NodeLabelHardAntiAffinity)(nil)

// Name implements Filter.
func (NodeLabelHardAntiAffinity) Name() string { return "NodeLabelHardAntiAffinity" }

// Filter implements Filter.
func (NodeLabelHardAntiAffinity) Filter(st *State, n *NodeView) Status {
	if matches(n.Labels, st.hardAnti) > 0 {
		return Reject("LABEL_ANTI_AFFINITY", "node has a forbidden label")
	}
	return Pass
}
