package scheduler

// NodeLabelSoftExclusion prefers nodes with fewer of the policy's
// NodeLabelSoftExclusions: MaxScore × (1 − matched / listed); 0 for everyone when there
// are none. (What NodeLabelSoftAntiAffinities did before it meant spreading.)
type NodeLabelSoftExclusion struct{}

var _ Scorer = (*NodeLabelSoftExclusion)(nil)

// Name implements Scorer.
func (NodeLabelSoftExclusion) Name() string { return "NodeLabelSoftExclusion" }

func (NodeLabelSoftExclusion) prepareScorer(a *attempt) bool {
	if len(a.st.softExcl) == 0 {
		return false
	}
	a.countLabels(labelSoftExcl, a.st.softExcl)
	// The score of each possible count of matched pairs.
	tab := grow(a.labelTab[1], len(a.st.softExcl)+1)
	for m := range tab {
		tab[m] = MaxScore * (1 - float64(m)/float64(len(a.st.softExcl)))
	}
	a.labelTab[1] = tab
	return true
}

func (NodeLabelSoftExclusion) scoreBatch(a *attempt, cand []int32, out []float64) {
	cnt, tab := a.labelCnt[labelSoftExcl], a.labelTab[1]
	for _, c := range cand {
		out[c] = tab[cnt[a.pos[c]]]
	}
}

func (NodeLabelSoftExclusion) stable() bool { return true }

// scoreTable: a node's score is that of its count of matched pairs.
func (NodeLabelSoftExclusion) scoreTable(a *attempt) ([]int32, []float64, bool) {
	return a.labelCnt[labelSoftExcl], a.labelTab[1], false
}
