package scheduler

// Lifecycle rejects nodes that take no new VMs because of where they are in their life
// or their place's (Node.Lifecycle): a CLOSED region, a RETIRED or MAINTENANCE host, a
// DECOMMISSIONING rack. It also keeps moves (drains) off such nodes.
type Lifecycle struct{}

var _ Filter = (*Lifecycle)(nil)

var lifecycleStatus = map[Code]knownStatus{
	LifecycleRegionClosed:        known(LifecycleRegionClosed, "the region is closed to new VMs"),
	LifecycleHostRetired:         known(LifecycleHostRetired, "the host is retired"),
	LifecycleHostMaintenance:     known(LifecycleHostMaintenance, "the host is in maintenance"),
	LifecycleRackDecommissioning: known(LifecycleRackDecommissioning, "the host's rack is being decommissioned"),
}

var statusLifecycleOther = known("NOT_IN_SERVICE", "the node is not in service")

// Name implements Filter.
func (Lifecycle) Name() string { return "Lifecycle" }

func (Lifecycle) prepareFilter(*attempt) bool { return true }

func (Lifecycle) filterBatch(a *attempt, fi int, cand []int32) []int32 {
	nodes := a.st.Snapshot.Nodes
	n := 0
	for _, c := range cand {
		if l := nodes[a.pos[c]].Lifecycle; l != "" {
			st, ok := lifecycleStatus[l]
			if !ok {
				st = statusLifecycleOther
			}
			a.reject(c, fi, st.id)
			continue
		}
		cand[n] = c
		n++
	}
	return cand[:n]
}

func (Lifecycle) stable() bool { return true }
