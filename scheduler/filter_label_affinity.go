package scheduler

// NodeLabelHardAffinity keeps nodes that carry every key=value of the policy's
// NodeLabelHardAffinities.
type NodeLabelHardAffinity struct{}

var _ Filter = (*NodeLabelHardAffinity)(nil)

// Name implements Filter.
func (NodeLabelHardAffinity) Name() string { return "NodeLabelHardAffinity" }

// Filter implements Filter.
func (NodeLabelHardAffinity) Filter(st *State, n *NodeView) Status {
	if matches(n.Labels, st.hardAff) == len(st.hardAff) {
		return Pass
	}
	return Reject("LABEL_AFFINITY", "node lacks a required label")
}
