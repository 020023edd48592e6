package scheduler

// NodeLabelSoftAffinity prefers nodes with more of the policy's NodeLabelSoftAffinities:
// MaxScore × matched / wanted (0 for everyone when there are none).
type NodeLabelSoftAffinity struct{}

var _ Scorer = (*NodeLabelSoftAffinity)(nil)

// Name implements Scorer.
func (NodeLabelSoftAffinity) Name() string { return "NodeLabelSoftAffinity" }

// Score implements Scorer.
func (NodeLabelSoftAffinity) Score(st *State, n *NodeView) float64 {
	if len(st.softAff) == 0 {
		return 0
	}
	return MaxScore * float64(matches(n.Labels, st.softAff)) / float64(len(st.softAff))
}
