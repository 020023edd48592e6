package scheduler

import "slices"

// MaxScore is the highest score a Scorer gives; scores are 0..MaxScore.
const MaxScore = 100.0

// Code is a machine-readable reason a filter rejected a node; empty means it passed.
type Code string

// Status is a filter's verdict on a node.
type Status struct {
	Code   Code
	Reason string
}

// OK reports whether the node passed the filter.
func (s Status) OK() bool { return s.Code == "" }

// Pass is the Status of a node that passed a filter.
var Pass = Status{}

// knownStatus is a filter's rejection with a small number, which is what a decision
// records per node (no strings, so no GC work).
type knownStatus struct {
	Status
	id uint16
}

// knownStatuses holds every knownStatus by id.
var knownStatuses []Status

// known declares a rejection (at package level, one per code).
func known(code Code, reason string) knownStatus {
	knownStatuses = append(knownStatuses, Status{Code: code, Reason: reason})
	return knownStatus{knownStatuses[len(knownStatuses)-1], uint16(len(knownStatuses) - 1)}
}

// Filter decides which nodes of the cluster being tried can take the next VM of the
// group. Config.Filters chooses and orders this package's filters (one per file); they
// work on a chunk of candidate nodes at a time, reading the attempt's compact copy of
// the nodes (attempt.hot, attempt.pos) and the group's progress (attempt.st).
type Filter interface {
	// Name names the filter in explanations and NoPlacementError.Reasons.
	Name() string
	// prepareFilter readies the filter for the attempt, once per cluster tried; false
	// means it passes every node for this request, so it is skipped.
	prepareFilter(a *attempt) bool
	// filterBatch keeps the candidates (indexes into the cluster's nodes) that pass,
	// compacted in place in order, and records the rejection of the others with
	// a.reject(c, fi, status.id).
	filterBatch(a *attempt, fi int, cand []int32) []int32
	// stable reports whether a verdict only depends on the request and the node's own
	// allocations, so it holds for the next VM of the group unless the node takes this
	// one.
	stable() bool
}

// Scorer ranks the nodes that passed every filter, from 0 to MaxScore. Weights are
// applied by the framework, not by scorers.
type Scorer interface {
	// Name names the scorer in Config.Weights and explanations.
	Name() string
	// prepareScorer readies the scorer for the attempt; false means it scores every node
	// 0 for this request, so it is skipped.
	prepareScorer(a *attempt) bool
	// scoreBatch writes the score of each candidate c to out[c].
	scoreBatch(a *attempt, cand []int32, out []float64)
	// stable reports whether a score only depends on the request and the node's own
	// allocations (see Filter).
	stable() bool
}

// state is the group's progress in the decision: the request, the snapshot, the
// group's VMs (those already running, Request.GroupNodeIDs, and those placed so far in
// this decision) and the quota the placed ones consume.
type state struct {
	Snapshot *Snapshot
	Request  *Request
	group    []int32          // positions in Snapshot.Nodes of Request.GroupNodeIDs found there
	placed   []int32          // positions of the nodes that took the group's VMs so far, in order
	quota    []hostGroupQuota // quota usage including the group's placed VMs

	// The policy's label maps as slices.
	hardAff, hardExcl, softAff, softExcl []labelPair
	// The topology keys the group spreads over (the anti-affinity maps' keys), sorted.
	hardSpread, softSpread []string
}

type hostGroupQuota struct {
	hostGroupID int
	q           Quota
}

type labelPair struct{ key, value string }

func pairs(m map[string]string) []labelPair {
	if len(m) == 0 {
		return nil
	}
	out := make([]labelPair, 0, len(m))
	for k, v := range m {
		out = append(out, labelPair{k, v})
	}
	return out
}

// keys returns the map's keys, sorted (nil when there are none).
func keys(m map[string]string) []string {
	if len(m) == 0 {
		return nil
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// init fills the label pairs and the existing group members from the request.
func (st *state) init() {
	p := &st.Request.Policy
	st.hardAff, st.hardExcl = pairs(p.NodeLabelHardAffinities), pairs(p.NodeLabelHardExclusions)
	st.softAff, st.softExcl = pairs(p.NodeLabelSoftAffinities), pairs(p.NodeLabelSoftExclusions)
	st.hardSpread, st.softSpread = keys(p.NodeLabelHardAntiAffinities), keys(p.NodeLabelSoftAntiAffinities)
	st.group = st.group[:0]
	if len(st.Request.GroupNodeIDs) > 0 {
		ix := st.Snapshot.index()
		for _, id := range st.Request.GroupNodeIDs {
			if p, ok := ix.position(st.Snapshot, id); ok {
				st.group = append(st.group, p)
			}
		}
	}
}

// members is the number of the group's VMs so far: already running plus placed.
func (st *state) members() int { return len(st.group) + len(st.placed) }

// memberPos returns the position in Snapshot.Nodes of the node of the group's i-th VM:
// the running ones first, then those placed.
func (st *state) memberPos(i int) int32 {
	if i < len(st.group) {
		return st.group[i]
	}
	return st.placed[i-len(st.group)]
}

// quotaOf returns the tenant's quota in a host group including the group's placed VMs,
// and whether there is one.
func (st *state) quotaOf(hostGroupID int) (Quota, bool) {
	for i := range st.quota {
		if st.quota[i].hostGroupID == hostGroupID {
			return st.quota[i].q, true
		}
	}
	q, ok := st.Snapshot.Quotas[QuotaKey{TenantID: st.Request.TenantID, HostGroupID: hostGroupID}]
	return q, ok
}

// useQuota counts a VM placed in the host group against the tenant's quota, if any.
func (st *state) useQuota(hostGroupID int) {
	q, ok := st.quotaOf(hostGroupID)
	if !ok {
		return
	}
	f := st.Request.Flavor
	q.UsedVCPUs += f.VCPUs
	q.UsedMemoryMB += f.MemoryMB
	q.UsedStorageGB += f.DiskGB
	for i := range st.quota {
		if st.quota[i].hostGroupID == hostGroupID {
			st.quota[i].q = q
			return
		}
	}
	st.quota = append(st.quota, hostGroupQuota{hostGroupID, q})
}

type azLoad struct {
	name           string
	capacity, used int
}

// free is the fraction of the AZ's CPU still free (1 when unknown).
func (a *azLoad) free() float64 {
	if a.capacity <= 0 {
		return 1
	}
	return clamp01(float64(a.capacity-a.used) / float64(a.capacity))
}

func clamp01(f float64) float64 {
	if f < 0 {
		return 0
	}
	if f > 1 {
		return 1
	}
	return f
}
