package scheduler

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
// VMs of the group placed so far and the quota they consume.
type State struct {
	Snapshot *Snapshot
	Request  *Request
	placed   []*NodeView
	quota    map[QuotaKey]Quota // quota usage including the group's placed VMs
	az       map[string]*azLoad

	// The policy's label maps as slices, so per-node checks need no map iteration.
	hardAff, hardAnti, softAff, softAnti []labelPair
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
	p := &r.Policy
	return &State{Snapshot: s, Request: r,
		hardAff: pairs(p.NodeLabelHardAffinities), hardAnti: pairs(p.NodeLabelHardAntiAffinities),
		softAff: pairs(p.NodeLabelSoftAffinities), softAnti: pairs(p.NodeLabelSoftAntiAffinities)}
}

// Placed returns the nodes that took the group's earlier VMs, in order (a node may repeat).
func (st *State) Placed() []*NodeView { return st.placed }

// Quota returns the tenant's quota in a host group including the group's placed VMs, and
// whether there is one.
func (st *State) Quota(hostGroupID int) (Quota, bool) {
	k := QuotaKey{TenantID: st.Request.TenantID, HostGroupID: hostGroupID}
	if q, ok := st.quota[k]; ok {
		return q, true
	}
	q, ok := st.Snapshot.Quotas[k]
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
		if st.quota == nil {
			st.quota = map[QuotaKey]Quota{}
		}
		st.quota[QuotaKey{TenantID: st.Request.TenantID, HostGroupID: n.HostGroupID}] = q
	}
	if n.az != nil {
		n.az.used += f.VCPUs
	}
}

// azFree returns the fraction of CPU still free in the node's availability zone within
// the cluster being tried (1 when unknown).
func (st *State) azFree(n *NodeView) float64 {
	a := n.az
	if a == nil {
		a = st.az[n.AvailabilityZone]
	}
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
