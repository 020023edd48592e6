package scheduler

// SpreadAZ spreads across availability zones. Half the score rewards an AZ that holds
// few of the group's VMs placed so far; the other half rewards an AZ with a large share
// of its CPU free in the cluster, which spreads successive single-VM requests too.
type SpreadAZ struct{}

var _ Scorer = (*SpreadAZ)(nil)

// Name implements Scorer.
func (SpreadAZ) Name() string { return "SpreadAZ" }

// Score implements Scorer.
func (SpreadAZ) Score(st *State, n *NodeView) float64 {
	group := 1.0
	if len(st.placed) > 0 {
		same := 0
		for _, p := range st.placed {
			if p.AvailabilityZone == n.AvailabilityZone {
				same++
			}
		}
		group = 1 - float64(same)/float64(len(st.placed))
	}
	return MaxScore * (group + st.azFree(n)) / 2
}
