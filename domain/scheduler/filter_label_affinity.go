package scheduler

// NodeLabelHardAffinity keeps nodes that carry every key=value of the policy's
// NodeLabelHardAffinities.
type NodeLabelHardAffinity struct{}

var _ Filter = (*NodeLabelHardAffinity)(nil)

var statusLabelAffinity = known("LABEL_AFFINITY", "node lacks a required label")

// Name implements Filter.
func (NodeLabelHardAffinity) Name() string { return "NodeLabelHardAffinity" }

func (NodeLabelHardAffinity) prepareFilter(a *attempt) bool {
	if len(a.st.hardAff) == 0 {
		return false
	}
	a.countLabels(labelHardAff, a.st.hardAff)
	return true
}

func (NodeLabelHardAffinity) filterBatch(a *attempt, fi int, cand []int32) []int32 {
	n := 0
	cnt, want := a.labelCnt[labelHardAff], int32(len(a.st.hardAff))
	for _, c := range cand {
		if cnt[a.pos[c]] != want {
			a.reject(c, fi, statusLabelAffinity.id)
			continue
		}
		cand[n] = c
		n++
	}
	return cand[:n]
}

func (NodeLabelHardAffinity) stable() bool { return true }
