package scheduler

// NodeLabelExclusion rejects nodes that carry any key=value of the policy's
// NodeLabelHardExclusions ("never on nodes with this label"). Before label anti-affinity
// meant spreading, NodeLabelHardAntiAffinities did this; stored policies were migrated
// (fieldtype.SchedulePolicy).
type NodeLabelExclusion struct{}

var _ Filter = (*NodeLabelExclusion)(nil)

var statusLabelExcluded = known("LABEL_EXCLUDED", "node has an excluded label")

// Name implements Filter.
func (NodeLabelExclusion) Name() string { return "NodeLabelExclusion" }

func (NodeLabelExclusion) prepareFilter(a *attempt) bool {
	if len(a.st.hardExcl) == 0 {
		return false
	}
	a.countLabels(labelHardExcl, a.st.hardExcl)
	return true
}

func (NodeLabelExclusion) filterBatch(a *attempt, fi int, cand []int32) []int32 {
	n := 0
	cnt := a.labelCnt[labelHardExcl]
	for _, c := range cand {
		if cnt[a.pos[c]] > 0 {
			a.reject(c, fi, statusLabelExcluded.id)
			continue
		}
		cand[n] = c
		n++
	}
	return cand[:n]
}

func (NodeLabelExclusion) stable() bool { return true }
