package scheduler

// NodeLabelSoftAntiAffinity spreads the group as evenly as it can over the values of each
// label key of the policy's NodeLabelSoftAntiAffinities (Kubernetes' preferred pod
// anti-affinity with a topology key): per key, MaxScore × (1 − VMs of the group on
// nodes with the node's value / VMs of the group), averaged over the keys; MaxScore for
// every node while the group is empty. Nodes without the label count as one value of
// their own.
type NodeLabelSoftAntiAffinity struct{}

var _ Scorer = (*NodeLabelSoftAntiAffinity)(nil)

// Name implements Scorer.
func (NodeLabelSoftAntiAffinity) Name() string { return "NodeLabelSoftAntiAffinity" }

func (NodeLabelSoftAntiAffinity) prepareScorer(a *attempt) bool {
	if len(a.st.softSpread) == 0 {
		return false
	}
	a.spread[1].prepare(a, a.st.softSpread)
	return true
}

func (NodeLabelSoftAntiAffinity) scoreBatch(a *attempt, cand []int32, out []float64) {
	sp := &a.spread[1]
	sp.sync(&a.st)
	members := a.st.members()
	if members == 0 {
		for _, c := range cand {
			out[c] = MaxScore
		}
		return
	}
	for _, c := range cand {
		p, sum := a.pos[c], 0.0
		for i := range sp.keys {
			sum += 1 - float64(sp.cnt[i][sp.vals[i].ids[p]])/float64(members)
		}
		out[c] = MaxScore * sum / float64(len(sp.keys))
	}
}

// stable is false: the score depends on the group.
func (NodeLabelSoftAntiAffinity) stable() bool { return false }
