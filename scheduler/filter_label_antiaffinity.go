package scheduler

// NodeLabelHardAntiAffinity rejects nodes that carry any key=value of the policy's
// NodeLabelHardAntiAffinities.
type NodeLabelHardAntiAffinity struct{}

var _ Filter = (*NodeLabelHardAntiAffinity)(nil)

var statusLabelAntiAffinity = known("LABEL_ANTI_AFFINITY", "node has a forbidden label")

// Name implements Filter.
func (NodeLabelHardAntiAffinity) Name() string { return "NodeLabelHardAntiAffinity" }

func (NodeLabelHardAntiAffinity) prepareFilter(a *attempt) bool {
	if len(a.st.hardAnti) == 0 {
		return false
	}
	a.countLabels(labelHardAnti, a.st.hardAnti)
	return true
}

func (NodeLabelHardAntiAffinity) filterBatch(a *attempt, fi int, cand []int32) []int32 {
	n := 0
	cnt := a.labelCnt[labelHardAnti]
	for _, c := range cand {
		if cnt[a.pos[c]] > 0 {
			a.reject(c, fi, statusLabelAntiAffinity.id)
			continue
		}
		cand[n] = c
		n++
	}
	return cand[:n]
}

func (NodeLabelHardAntiAffinity) stable() bool { return true }
