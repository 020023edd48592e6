package scheduler

import "reflect"

// MaxScore is the highest score a Scorer may return; scores are 0..MaxScore.
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

// Reject builds a failing Status.
func Reject(code Code, reason string) Status { return Status{Code: code, Reason: reason} }

// knownStatus is a built-in filter's rejection with a small number, which is what a
// decision records per node (no strings, so no GC work).
type knownStatus struct {
	Status
	id uint16
}

// knownStatuses holds every knownStatus by id.
var knownStatuses []Status

func known(code Code, reason string) knownStatus {
	knownStatuses = append(knownStatuses, Reject(code, reason))
	return knownStatus{Reject(code, reason), uint16(len(knownStatuses) - 1)}
}

// Filter decides whether a node can take the next VM of the group.
type Filter interface {
	Name() string
	Filter(st *State, n *NodeView) Status
}

// Scorer ranks a node that passed every filter, from 0 to MaxScore. Weights are applied
// by the framework, not by scorers.
type Scorer interface {
	Name() string
	Score(st *State, n *NodeView) float64
}

// NodeView is a node with allocations that include the VMs of the group already placed
// during this decision (the scratch copy; the Snapshot is untouched).
type NodeView struct {
	*Node
	CPUUsed       int
	MemoryUsedMB  int64
	DiskUsedGB    int64
	DedicatedFree int
	az            *azLoad // the node's AZ load in the cluster being tried, if known
	pos           int32   // position in Snapshot.Nodes (views of a decision only)
}

func newNodeView(n *Node) NodeView {
	return NodeView{Node: n, CPUUsed: n.CPUAllocated, MemoryUsedMB: n.MemoryAllocatedMB,
		DiskUsedGB: n.DiskAllocatedGB, DedicatedFree: n.DedicatedCoresFree}
}

// FreeCPU is the number of unallocated cores.
func (v *NodeView) FreeCPU() int { return v.CPUCapacity - v.CPUUsed }

// FreeMemoryMB is the unallocated memory.
func (v *NodeView) FreeMemoryMB() int64 { return v.MemoryMB - v.MemoryUsedMB }

// FreeDiskGB is the unallocated disk.
func (v *NodeView) FreeDiskGB() int64 { return v.DiskGB - v.DiskUsedGB }

// State is what plugins see of the decision in progress: the request, the snapshot, the
// group's VMs (those already running, Request.GroupNodeIDs, and those placed so far in
// this decision) and the quota the placed ones consume.
type State struct {
	Snapshot *Snapshot
	Request  *Request
	placed   []*NodeView
	group    []*Node          // nodes of Request.GroupNodeIDs found in the snapshot
	groupPos []int32          // their positions in Snapshot.Nodes
	quota    []hostGroupQuota // quota usage including the group's placed VMs
	az       map[string]*azLoad

	// The policy's label maps as slices, so per-node checks need no map iteration.
	hardAff, hardAnti, softAff, softAnti []labelPair

	a *attempt // the decision's fast-path data; nil for a State built by newState alone
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

// matches counts the pairs the labels have.
func matches(labels map[string]string, want []labelPair) int {
	m := 0
	for _, p := range want {
		if got, ok := labels[p.key]; ok && got == p.value {
			m++
		}
	}
	return m
}

type azLoad struct {
	name           string
	capacity, used int
}

func newState(s *Snapshot, r *Request) *State {
	st := &State{Snapshot: s, Request: r}
	st.init()
	return st
}

// init fills the label pairs and the existing group members from the request.
func (st *State) init() {
	p := &st.Request.Policy
	st.hardAff, st.hardAnti = pairs(p.NodeLabelHardAffinities), pairs(p.NodeLabelHardAntiAffinities)
	st.softAff, st.softAnti = pairs(p.NodeLabelSoftAffinities), pairs(p.NodeLabelSoftAntiAffinities)
	st.group, st.groupPos = st.group[:0], st.groupPos[:0]
	if len(st.Request.GroupNodeIDs) > 0 {
		ix := st.Snapshot.index()
		for _, id := range st.Request.GroupNodeIDs {
			if p, ok := ix.position(st.Snapshot, id); ok {
				st.group = append(st.group, &st.Snapshot.Nodes[p])
				st.groupPos = append(st.groupPos, p)
			}
		}
	}
}

// Placed returns the nodes that took the group's earlier VMs in this decision, in order
// (a node may repeat). GroupNodes holds the group's VMs that were already running.
func (st *State) Placed() []*NodeView { return st.placed }

// GroupNodes returns the nodes of Request.GroupNodeIDs (the group's VMs already running)
// that are in the snapshot, in order. Zone rules and spreading count them like Placed;
// their allocations and quota use are already in the snapshot.
func (st *State) GroupNodes() []*Node { return st.group }

// members is the number of the group's VMs so far: already running plus placed.
func (st *State) members() int { return len(st.group) + len(st.placed) }

// member returns the node of the group's i-th VM: GroupNodes first, then Placed.
func (st *State) member(i int) *Node {
	if i < len(st.group) {
		return st.group[i]
	}
	return st.placed[i-len(st.group)].Node
}

// memberPos returns the position in Snapshot.Nodes of the node of the group's i-th VM
// (views of a decision only).
func (st *State) memberPos(i int) int32 {
	if i < len(st.groupPos) {
		return st.groupPos[i]
	}
	return st.placed[i-len(st.groupPos)].pos
}

// Quota returns the tenant's quota in a host group including the group's placed VMs, and
// whether there is one.
func (st *State) Quota(hostGroupID int) (Quota, bool) {
	for i := range st.quota {
		if st.quota[i].hostGroupID == hostGroupID {
			return st.quota[i].q, true
		}
	}
	q, ok := st.Snapshot.Quotas[QuotaKey{TenantID: st.Request.TenantID, HostGroupID: hostGroupID}]
	return q, ok
}

// place records a VM on n: its allocations, the tenant's quota use and the AZ load.
func (st *State) place(n *NodeView) {
	f := st.Request.Flavor
	n.CPUUsed += f.VCPUs
	n.MemoryUsedMB += f.MemoryMB
	n.DiskUsedGB += f.DiskGB
	if f.Dedicated {
		n.DedicatedFree -= f.VCPUs
	}
	st.placed = append(st.placed, n)
	if q, ok := st.Quota(n.HostGroupID); ok {
		q.UsedVCPUs += f.VCPUs
		q.UsedMemoryMB += f.MemoryMB
		q.UsedStorageGB += f.DiskGB
		st.setQuota(n.HostGroupID, q)
	}
	if n.az != nil {
		n.az.used += f.VCPUs
	}
}

func (st *State) setQuota(hostGroupID int, q Quota) {
	for i := range st.quota {
		if st.quota[i].hostGroupID == hostGroupID {
			st.quota[i].q = q
			return
		}
	}
	st.quota = append(st.quota, hostGroupQuota{hostGroupID, q})
}

// azFree returns the fraction of CPU still free in the node's availability zone within
// the cluster being tried (1 when unknown).
func (st *State) azFree(n *NodeView) float64 {
	a := n.az
	if a == nil {
		a = st.az[n.AvailabilityZone]
	}
	return a.free()
}

// free is the fraction of the AZ's CPU still free (1 when unknown).
func (a *azLoad) free() float64 {
	if a == nil || a.capacity <= 0 {
		return 1
	}
	f := float64(a.capacity-a.used) / float64(a.capacity)
	return clamp01(f)
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

// batchFilter is the fast form every built-in filter adds to Filter. The framework
// prepares it once per cluster tried, then hands it many candidate nodes at a time; its
// verdicts are exactly those of Filter (the table tests check both).
type batchFilter interface {
	Filter
	// prepareFilter readies the filter for the attempt; false means it passes every node
	// for this request, so it is skipped.
	prepareFilter(a *attempt) bool
	// filterBatch keeps the candidates (indexes into the cluster's nodes: a.pos, a.hot)
	// that pass, compacted in place in order, and records the rejection of the others
	// with a.reject(c, fi, status.id).
	filterBatch(a *attempt, fi int, cand []int32) []int32
	// stable reports whether a verdict only depends on the request and the node's own
	// view, so it holds for the next VM of the group unless the node takes this one.
	stable() bool
}

// batchScorer is the fast form every built-in scorer adds to Scorer; its scores are
// exactly those of Score.
type batchScorer interface {
	Scorer
	// prepareScorer readies the scorer for the attempt; false means it scores every node
	// 0 for this request, so it is skipped.
	prepareScorer(a *attempt) bool
	// scoreBatch writes the score of each candidate c to out[c].
	scoreBatch(a *attempt, cand []int32, out []float64)
	// stable reports whether a score only depends on the request and the node's own
	// view (see batchFilter.stable).
	stable() bool
}

var pkgPath = reflect.TypeFor[Ready]().PkgPath()

// builtin reports whether x is one of this package's plugin types itself (not, say, a
// type of another package that embeds one and overrides Filter).
func builtin(x any) bool {
	t := reflect.TypeOf(x)
	return t.Kind() == reflect.Struct && t.PkgPath() == pkgPath
}

// fastFilter returns f's batch form, or (when !batch) an adapter calling f.Filter node
// by node.
func fastFilter(f Filter, batch bool) batchFilter {
	if b, ok := f.(batchFilter); ok && builtin(f) && batch {
		return b
	}
	return genericFilter{f}
}

// fastScorer returns s's batch form, or (when !batch) an adapter calling s.Score node
// by node.
func fastScorer(s Scorer, batch bool) batchScorer {
	if b, ok := s.(batchScorer); ok && builtin(s) && batch {
		return b
	}
	return genericScorer{s}
}

type genericFilter struct{ f Filter }

func (g genericFilter) Name() string                         { return g.f.Name() }
func (g genericFilter) Filter(st *State, n *NodeView) Status { return g.f.Filter(st, n) }
func (genericFilter) prepareFilter(*attempt) bool            { return true }
func (genericFilter) stable() bool                           { return false }

// filterBatch needs a.views current (attempt.fullViews).
func (g genericFilter) filterBatch(a *attempt, fi int, cand []int32) []int32 {
	out := cand[:0]
	for _, c := range cand {
		if st := g.f.Filter(&a.st, &a.views[c]); !st.OK() {
			a.rejectWith(c, fi, st)
			continue
		}
		out = append(out, c)
	}
	return out
}

type genericScorer struct{ Scorer }

func (genericScorer) prepareScorer(*attempt) bool { return true }
func (genericScorer) stable() bool                { return false }

// scoreBatch needs a.views current (attempt.fullViews).
func (g genericScorer) scoreBatch(a *attempt, cand []int32, out []float64) {
	for _, c := range cand {
		out[c] = g.Score(&a.st, &a.views[c])
	}
}
