package scheduler

// NodeLabelSoftAntiAffinity prefers nodes with fewer of the policy's
// NodeLabelSoftAntiAffinities: MaxScore × (1 − matched / listed); 0 for everyone when
// there are none.
type NodeLabelSoftAntiAffinity struct{}

var _ Scorer = (*NodeLabelSoftAntiAffinity)(nil)

// Name implements Scorer.
func (NodeLabelSoftAntiAffinity) Name() string { return "NodeLabelSoftAntiAffinity" }

// Score implements Scorer.
func (NodeLabelSoftAntiAffinity) Score(st *State, n *NodeView) float64 {
	if len(st.softAnti) == 0 {
		return 0
	}
	return MaxScore * (1 - float64(matches(n.Labels, st.softAnti))/float64(len(st.softAnti)))
}
