package scheduler

// NodeLabelSoftAffinity prefers nodes with more of the policy's NodeLabelSoftAffinities:
// MaxScore × matched / wanted (0 for everyone when there are none).
type NodeLabelSoftAffinity struct{}

var _ Scorer = (*NodeLabelSoftAffinity)(nil)

// Name implements Scorer.
func (NodeLabelSoftAffinity) Name() string { return "NodeLabelSoftAffinity" }

func (NodeLabelSoftAffinity) prepareScorer(a *attempt) bool {
	if len(a.st.softAff) == 0 {
		return false
	}
	a.countLabels(labelSoftAff, a.st.softAff)
	// The score of each possible count of matched pairs.
	tab := grow(a.labelTab[0], len(a.st.softAff)+1)
	for m := range tab {
		tab[m] = MaxScore * float64(m) / float64(len(a.st.softAff))
	}
	a.labelTab[0] = tab
	return true
}

func (NodeLabelSoftAffinity) scoreBatch(a *attempt, cand []int32, out []float64) {
	cnt, tab := a.labelCnt[labelSoftAff], a.labelTab[0]
	for _, c := range cand {
		out[c] = tab[cnt[a.pos[c]]]
	}
}

func (NodeLabelSoftAffinity) stable() bool { return true }

// scoreTable: a node's score is that of its count of matched pairs.
func (NodeLabelSoftAffinity) scoreTable(a *attempt) ([]int32, []float64, bool) {
	return a.labelCnt[labelSoftAff], a.labelTab[0], false
}
