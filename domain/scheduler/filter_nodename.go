package scheduler

// NodeName keeps only the nodes the policy names, when it names any.
type NodeName struct{}

var _ Filter = (*NodeName)(nil)

var statusNodeName = known("NODE_NAME", "node is not one of the policy's node names")

// Name implements Filter.
func (NodeName) Name() string { return "NodeName" }

// prepareFilter marks the named nodes.
func (NodeName) prepareFilter(a *attempt) bool {
	names := a.st.Request.Policy.NodeNames
	if len(names) == 0 {
		return false
	}
	s := a.st.Snapshot
	a.nameOK = grow(a.nameOK, len(s.Nodes))
	clear(a.nameOK)
	for _, name := range names {
		for _, p := range a.ix.named(s, name) {
			a.nameOK[p] = true
		}
	}
	return true
}

func (NodeName) filterBatch(a *attempt, fi int, cand []int32) []int32 {
	n := 0
	for _, c := range cand {
		if !a.nameOK[a.pos[c]] {
			a.reject(c, fi, statusNodeName.id)
			continue
		}
		cand[n] = c
		n++
	}
	return cand[:n]
}

func (NodeName) stable() bool { return true }
