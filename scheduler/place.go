package scheduler

// attempt is the placement of a group in one cluster, VM by VM.
type attempt struct {
	cluster *Cluster
	st      *State
	views   []NodeView
	filters []Filter
	scorers []weighted
	// Results of the last round (one VM): per node the rejecting filter index (-1 if it
	// passed), its status, its scores (len(scorers) per node) and total.
	rejectedBy []int
	status     []Status
	scores     []float64
	totals     []float64
	placements []Placement
	// reasons counts rejections per filter in the round that failed.
	reasons map[string]int
	quiet   bool // leave Decision.Nodes empty
}

// tryCluster places as many VMs of the group as fit in cluster c.
func tryCluster(s *Snapshot, r *Request, c clusterCandidate, filters []Filter, scorers []weighted) *attempt {
	a := &attempt{cluster: c.Cluster, st: newState(s, r), filters: filters, scorers: scorers}
	a.st.az = map[string]*azLoad{}
	a.views = make([]NodeView, 0, c.nodes)
	var last *azLoad // nodes of an AZ tend to be adjacent: skip most map lookups
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if n.ClusterID != c.ID {
			continue
		}
		l := last
		if l == nil || l.name != n.AvailabilityZone {
			l = a.st.az[n.AvailabilityZone]
			if l == nil {
				l = &azLoad{name: n.AvailabilityZone}
				a.st.az[n.AvailabilityZone] = l
			}
			last = l
		}
		l.capacity += n.CPUCapacity
		l.used += n.CPUAllocated
		v := newNodeView(n)
		v.az = l
		a.views = append(a.views, v)
	}
	k := len(a.views)
	a.rejectedBy = make([]int, k)
	a.status = make([]Status, k)
	a.scores = make([]float64, k*len(scorers))
	a.totals = make([]float64, k)
	for range r.Count {
		best := a.round()
		if best < 0 {
			a.reasons = a.countRejections()
			break
		}
		a.placements = append(a.placements, Placement{NodeID: a.views[best].ID, Total: a.totals[best]})
		a.st.place(&a.views[best])
	}
	return a
}

// round evaluates every node for the next VM and returns the index of the best, or -1.
// Ties go to the lowest node ID.
func (a *attempt) round() int {
	best := -1
	ns := len(a.scorers)
	for i := range a.views {
		v := &a.views[i]
		a.rejectedBy[i] = -1
		a.status[i] = Pass
		for j, f := range a.filters {
			if st := f.Filter(a.st, v); !st.OK() {
				a.rejectedBy[i], a.status[i] = j, st
				break
			}
		}
		if a.rejectedBy[i] >= 0 {
			continue
		}
		total := 0.0
		for j, s := range a.scorers {
			sc := s.Score(a.st, v)
			a.scores[i*ns+j] = sc
			total += s.weight * sc
		}
		a.totals[i] = total
		if best < 0 || total > a.totals[best] || (total == a.totals[best] && v.ID < a.views[best].ID) {
			best = i
		}
	}
	return best
}

func (a *attempt) countRejections() map[string]int {
	out := map[string]int{}
	for _, j := range a.rejectedBy {
		if j >= 0 {
			out[a.filters[j].Name()]++
		}
	}
	return out
}

// decision explains every node of the cluster as evaluated in the last round.
func (a *attempt) decision() Decision {
	d := Decision{
		ClusterID:  a.cluster.ID,
		Placements: a.placements,
		Unplaced:   a.st.Request.Count - len(a.placements),
	}
	if a.quiet {
		return d
	}
	d.Nodes = make([]NodeResult, len(a.views))
	ns := len(a.scorers)
	for i := range a.views {
		nr := NodeResult{NodeID: a.views[i].ID}
		if j := a.rejectedBy[i]; j >= 0 {
			nr.Rejected, nr.Code, nr.Reason = a.filters[j].Name(), a.status[i].Code, a.status[i].Reason
		} else {
			nr.Scores = make(map[string]float64, ns)
			for j, s := range a.scorers {
				nr.Scores[s.Name()] = a.scores[i*ns+j]
			}
			nr.Total = a.totals[i]
		}
		d.Nodes[i] = nr
	}
	return d
}
