package scheduler

// NodeLabelHardAntiAffinity spreads the group over the values of each label key of the
// policy's NodeLabelHardAntiAffinities (a topology key, as in Kubernetes' required pod
// anti-affinity): each VM of the group goes to a node whose value of the key no other VM
// of the group has (the running replicas, Request.GroupNodeIDs, count). A node without the
// label is rejected. When the cluster has fewer values than VMs, the last ones fit
// nowhere: the decision fails with this filter's rejections.
type NodeLabelHardAntiAffinity struct{}

var _ Filter = (*NodeLabelHardAntiAffinity)(nil)

var (
	statusNoSpreadLabel = known("NO_SPREAD_LABEL", "node lacks a label the group is spread over")
	statusLabelSpread   = known("LABEL_SPREAD",
		"a VM of the group already runs on a node with this label value (not enough distinct values)")
)

// Name implements Filter.
func (NodeLabelHardAntiAffinity) Name() string { return "NodeLabelHardAntiAffinity" }

// spreadState is a label spread of the attempt: per key, each node's value id and the
// group's VMs per value id.
type spreadState struct {
	keys []string
	vals []labelValues
	cnt  [][]int32 // per key, per value id (0: nodes without the label)
	seen int       // group members counted
}

// prepare readies the spread over keys.
func (sp *spreadState) prepare(a *attempt, keys []string) {
	sp.keys, sp.vals, sp.seen = keys, sp.vals[:0], 0
	for len(sp.cnt) < len(keys) {
		sp.cnt = append(sp.cnt, nil)
	}
	for i, k := range keys {
		v := a.ix.valuesOf(a.st.Snapshot, k)
		sp.vals = append(sp.vals, v)
		sp.cnt[i] = grow(sp.cnt[i], v.n+1)
		clear(sp.cnt[i])
	}
}

// sync counts the group's VMs placed since the last call.
func (sp *spreadState) sync(st *state) {
	for ; sp.seen < st.members(); sp.seen++ {
		p := st.memberPos(sp.seen)
		for i := range sp.keys {
			sp.cnt[i][sp.vals[i].ids[p]]++
		}
	}
}

func (NodeLabelHardAntiAffinity) prepareFilter(a *attempt) bool {
	if len(a.st.hardSpread) == 0 {
		return false
	}
	a.spread[0].prepare(a, a.st.hardSpread)
	return true
}

func (NodeLabelHardAntiAffinity) filterBatch(a *attempt, fi int, cand []int32) []int32 {
	sp := &a.spread[0]
	sp.sync(&a.st)
	n := 0
next:
	for _, c := range cand {
		p := a.pos[c]
		for i := range sp.keys {
			v := sp.vals[i].ids[p]
			if v == 0 {
				a.reject(c, fi, statusNoSpreadLabel.id)
				continue next
			}
			if sp.cnt[i][v] > 0 {
				a.reject(c, fi, statusLabelSpread.id)
				continue next
			}
		}
		cand[n] = c
		n++
	}
	return cand[:n]
}

// stable is false: the verdict depends on the group.
func (NodeLabelHardAntiAffinity) stable() bool { return false }
