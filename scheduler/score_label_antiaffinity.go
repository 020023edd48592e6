package scheduler

// NodeLabelSoftAntiAffinity prefers nodes with fewer of the policy's
// NodeLabelSoftAntiAffinities: MaxScore × (1 − matched / listed); 0 for everyone when
// there are none.
type NodeLabelSoftAntiAffinity struct{}

var _ Scorer = (*NodeLabelSoftAntiAffinity)(nil)

// Name implements Scorer.
func (NodeLabelSoftAntiAffinity) Name() string { return "NodeLabelSoftAntiAffinity" }

func (NodeLabelSoftAntiAffinity) prepareScorer(a *attempt) bool {
	if len(a.st.softAnti) == 0 {
		return false
	}
	a.countLabels(labelSoftAnti, a.st.softAnti)
	// The score of each possible count of matched pairs.
	tab := grow(a.labelTab[1], len(a.st.softAnti)+1)
	for m := range tab {
		tab[m] = MaxScore * (1 - float64(m)/float64(len(a.st.softAnti)))
	}
	a.labelTab[1] = tab
	return true
}

func (NodeLabelSoftAntiAffinity) scoreBatch(a *attempt, cand []int32, out []float64) {
	cnt, tab := a.labelCnt[labelSoftAnti], a.labelTab[1]
	for _, c := range cand {
		out[c] = tab[cnt[a.pos[c]]]
	}
}

func (NodeLabelSoftAntiAffinity) stable() bool { return true }

// scoreTable: a node's score is that of its count of matched pairs.
func (NodeLabelSoftAntiAffinity) scoreTable(a *attempt) ([]int32, []float64, bool) {
	return a.labelCnt[labelSoftAnti], a.labelTab[1], false
}
