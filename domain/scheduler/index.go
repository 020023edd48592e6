package scheduler

import (
	"cmp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"weak"
)

// index is what Schedule derives once per Snapshot from the nodes' static attributes
// (ID, Name, ClusterID, Providers, Labels, AvailabilityZone, zones, HostGroupID), so a
// decision compares small integers instead of strings and looks nothing up per node.
// Ready, Schedulable, Clusters and Quotas are never indexed, and a node's own
// allocations and capacities are read afresh by every decision from the nodes it looks
// at. The one thing the index keeps of the allocations is the sum of the CPU capacity and
// allocations per cluster and AZ (what SpreadAZ and the sample's start read), so that a
// decision need not visit every node: Snapshot.Apply keeps the sums current, and
// Snapshot.AllocationsChanged marks them for a recount after an edit in place.
//
// Positions ("pos") are indexes into Snapshot.Nodes; views are indexes into a cluster's
// list of positions.
type index struct {
	first *Node // &Nodes[0] when built: a replaced Nodes slice is detected
	n     int

	ids      []int           // per position: the node's ID
	clusters map[int][]int32 // cluster ID → positions of its nodes, ascending
	local    []int32         // per position: its index in its cluster's list

	cl        []*clusterInfo // per cluster, in order of first appearance
	clusterIx map[int]int32  // cluster ID → index in cl
	clusterOf []int32        // per position: its cluster's index in cl
	azSlot    []int32        // per position: index of its AZ in its cluster's clusterInfo.azs

	// cpuStale says the AZ sums (clusterInfo.azs) must be recounted from the nodes before
	// they are read (Snapshot.AllocationsChanged); cpuMu serializes the recount.
	cpuStale atomic.Bool
	cpuMu    sync.Mutex

	az      []int32 // per position: AZ id (every name, "" included, gets one)
	azNames []string

	zone    [numZoneKinds][]int32 // per kind, per position: zone id, 0 when the node has none
	zoneIDs [numZoneKinds]map[string]int32
	nzones  [numZoneKinds]int // ids are 1..nzones

	hg    []int32 // per position: dense host group id
	hgIDs []int   // dense id → HostGroupID

	prov     []int32    // per position: id of the node's provider set
	provSets [][]string // provider set id → providers

	byIDOnce sync.Once
	byID     map[int]int32 // node ID → position (the first, should IDs repeat)

	zoneNodesOnce sync.Once
	zoneNodes     [numZoneKinds][][]int32 // per kind, per zone id: positions of its nodes

	labelsOnce sync.Once
	labels     map[labelPair][]int32 // key=value → positions of the nodes carrying it

	namesOnce sync.Once
	names     map[string][]int32 // node name → positions

	valuesMu sync.Mutex
	values   map[string]labelValues // label key → each node's value of it
}

// clusterInfo is what the index keeps per cluster besides its positions.
type clusterInfo struct {
	pos []int32 // positions of its nodes, ascending (as index.clusters)
	// azs holds the CPU capacity and allocations of the cluster's nodes per AZ, in the
	// order the AZs first appear; maintained by Snapshot.Apply, recounted when stale.
	azs []azCPU

	visitOnce sync.Once
	visit     []int32 // the views interleaved across the cluster's AZs (visitOrder)
}

// azCPU is the CPU of one AZ's nodes in one cluster.
type azCPU struct {
	az             int32 // AZ id
	capacity, used int   // sums of CPUCapacity and CPUAllocated
}

// labelValues numbers the values of one label key: per position the id of the node's
// value (0 when the node lacks the key), and how many distinct values there are.
type labelValues struct {
	ids []int32
	n   int
}

// Zone kinds as small integers (the order of index.zone).
const (
	kindPower = iota
	kindRack
	kindNetwork
	numZoneKinds
)

// zoneKind maps ZoneRule.Kind to an index.zone slot, or -1 for an unknown kind.
func zoneKind(kind string) int {
	switch kind {
	case ZonePower:
		return kindPower
	case ZoneRack:
		return kindRack
	case ZoneNetwork:
		return kindNetwork
	}
	return -1
}

// interner gives strings dense ids; runs of equal strings (adjacent nodes in one rack
// or AZ) skip the map.
type interner struct {
	ids      map[string]int32
	names    []string
	last     string
	lastID   int32
	haveLast bool
	base     int32 // first id handed out
}

func newInterner(base int32) *interner {
	return &interner{ids: map[string]int32{}, base: base}
}

func (in *interner) id(s string) int32 {
	if in.haveLast && s == in.last {
		return in.lastID
	}
	id, ok := in.ids[s]
	if !ok {
		id = in.base + int32(len(in.names))
		in.ids[s] = id
		in.names = append(in.names, s)
	}
	in.last, in.lastID, in.haveLast = s, id, true
	return id
}

func buildIndex(s *Snapshot) *index {
	n := len(s.Nodes)
	ix := &index{n: n, clusters: map[int][]int32{}, clusterIx: map[int]int32{}}
	if n > 0 {
		ix.first = &s.Nodes[0]
	}
	ix.az = make([]int32, n)
	ix.ids = make([]int, n)
	ix.local = make([]int32, n)
	ix.clusterOf = make([]int32, n)
	ix.azSlot = make([]int32, n)
	ix.hg = make([]int32, n)
	ix.prov = make([]int32, n)
	for k := range ix.zone {
		ix.zone[k] = make([]int32, n)
	}
	azs := newInterner(0)
	var zones [numZoneKinds]*interner
	for k := range zones {
		zones[k] = newInterner(1)
	}
	hgs := map[int]int32{}
	provs := newInterner(0)
	lastCluster, lastList, lastCI := 0, []int32(nil), int32(0)
	slots := map[[2]int32]int32{} // (cluster index, AZ id) → slot in the cluster's azs
	lastAZ, lastSlot := int32(-1), int32(0)
	for i := range s.Nodes {
		nd := &s.Nodes[i]
		p := int32(i)
		if lastList == nil || nd.ClusterID != lastCluster {
			if lastList != nil {
				ix.clusters[lastCluster] = lastList
			}
			lastCluster, lastList = nd.ClusterID, ix.clusters[nd.ClusterID]
			ci, ok := ix.clusterIx[nd.ClusterID]
			if !ok {
				ci = int32(len(ix.cl))
				ix.clusterIx[nd.ClusterID] = ci
				ix.cl = append(ix.cl, &clusterInfo{})
			}
			lastCI, lastAZ = ci, -1
		}
		ix.ids[i] = nd.ID
		ix.local[i] = int32(len(lastList))
		lastList = append(lastList, p)
		ix.az[i] = azs.id(nd.AvailabilityZone)
		ix.clusterOf[i] = lastCI
		if az := ix.az[i]; az != lastAZ {
			slot, ok := slots[[2]int32{lastCI, az}]
			if !ok {
				ci := ix.cl[lastCI]
				slot = int32(len(ci.azs))
				slots[[2]int32{lastCI, az}] = slot
				ci.azs = append(ci.azs, azCPU{az: az})
			}
			lastAZ, lastSlot = az, slot
		}
		ix.azSlot[i] = lastSlot
		for k, z := range [numZoneKinds]string{nd.PowerZone, nd.RackZone, nd.NetworkZone} {
			if z != "" {
				ix.zone[k][i] = zones[k].id(z)
			}
		}
		h, ok := hgs[nd.HostGroupID]
		if !ok {
			h = int32(len(ix.hgIDs))
			hgs[nd.HostGroupID] = h
			ix.hgIDs = append(ix.hgIDs, nd.HostGroupID)
		}
		ix.hg[i] = h
		ix.prov[i] = provs.id(providerKey(nd.Providers))
		if int(ix.prov[i]) == len(ix.provSets) {
			ix.provSets = append(ix.provSets, slices.Clone(nd.Providers))
		}
	}
	if lastList != nil {
		ix.clusters[lastCluster] = lastList
	}
	for id, ci := range ix.clusterIx {
		ix.cl[ci].pos = ix.clusters[id]
	}
	ix.sumCPU(s)
	ix.azNames = azs.names
	for k := range zones {
		ix.zoneIDs[k] = zones[k].ids
		ix.nzones[k] = len(zones[k].names)
	}
	return ix
}

// sumCPU counts the CPU capacity and allocations of every cluster's AZs from the nodes.
func (ix *index) sumCPU(s *Snapshot) {
	for _, ci := range ix.cl {
		for i := range ci.azs {
			ci.azs[i].capacity, ci.azs[i].used = 0, 0
		}
	}
	for i := range s.Nodes {
		z := &ix.cl[ix.clusterOf[i]].azs[ix.azSlot[i]]
		z.capacity += s.Nodes[i].CPUCapacity
		z.used += s.Nodes[i].CPUAllocated
	}
}

// cluster returns what the index keeps of the cluster with this ID, nil when it has no
// nodes.
func (ix *index) cluster(id int) *clusterInfo {
	ci, ok := ix.clusterIx[id]
	if !ok {
		return nil
	}
	return ix.cl[ci]
}

// azCPU returns the cluster's CPU per AZ, recounted first when it is stale. Decisions
// may call it concurrently.
func (ix *index) azCPU(s *Snapshot, ci *clusterInfo) []azCPU {
	if ix.cpuStale.Load() {
		ix.cpuMu.Lock()
		if ix.cpuStale.Load() {
			ix.sumCPU(s)
			ix.cpuStale.Store(false)
		}
		ix.cpuMu.Unlock()
	}
	return ci.azs
}

// addUsedCPU counts vcpus more allocated on the node at position p (Snapshot.Apply).
// Stale sums are left alone: the recount will see the node.
func (ix *index) addUsedCPU(p int32, vcpus int) {
	if !ix.cpuStale.Load() {
		ix.cl[ix.clusterOf[p]].azs[ix.azSlot[p]].used += vcpus
	}
}

// visitOrder returns the cluster's views in the order a sampled round looks at them:
// interleaved across its AZs in proportion to their sizes (round robin when they are
// equal), each AZ's views in ascending order, so that any run of consecutive entries
// holds every AZ in its share, wherever operators put the AZs in Snapshot.Nodes (rack by
// rack, one AZ after the other). It is kube-scheduler's nodeTree idea; built on first
// use.
func (ix *index) visitOrder(ci *clusterInfo) []int32 {
	ci.visitOnce.Do(func() {
		size := make([]int64, len(ci.azs))
		for _, p := range ci.pos {
			size[ix.azSlot[p]]++
		}
		// The j-th view of an AZ of n views goes at (2j+1)/2n of the way: sort by that
		// fraction, ties by AZ slot.
		type entry struct {
			num, den   int64
			slot, view int32
		}
		seen := make([]int64, len(ci.azs))
		entries := make([]entry, len(ci.pos))
		for c, p := range ci.pos {
			slot := ix.azSlot[p]
			entries[c] = entry{num: 2*seen[slot] + 1, den: 2 * size[slot], slot: slot, view: int32(c)}
			seen[slot]++
		}
		slices.SortFunc(entries, func(a, b entry) int {
			if d := cmp.Compare(a.num*b.den, b.num*a.den); d != 0 {
				return d
			}
			return cmp.Compare(a.slot, b.slot)
		})
		ci.visit = make([]int32, len(entries))
		for i, e := range entries {
			ci.visit[i] = e.view
		}
	})
	return ci.visit
}

// providerKey is a node's provider list as one string, to intern the list.
func providerKey(ps []string) string {
	switch len(ps) {
	case 0:
		return ""
	case 1:
		return ps[0]
	}
	return strings.Join(ps, "\x00")
}

// position returns the position of the node with this ID.
func (ix *index) position(s *Snapshot, id int) (int32, bool) {
	ix.byIDOnce.Do(func() {
		ix.byID = make(map[int]int32, len(s.Nodes))
		for i := len(s.Nodes) - 1; i >= 0; i-- {
			ix.byID[s.Nodes[i].ID] = int32(i)
		}
	})
	p, ok := ix.byID[id]
	return p, ok
}

// inZone returns the positions of the nodes in zone id z of kind k.
func (ix *index) inZone(k int, z int32) []int32 {
	ix.zoneNodesOnce.Do(func() {
		for k := range ix.zoneNodes {
			// Counting sort: one array of positions per kind, sliced per zone.
			count := make([]int32, ix.nzones[k]+2)
			for _, z := range ix.zone[k] {
				count[z+1]++
			}
			for z := 1; z < len(count); z++ {
				count[z] += count[z-1]
			}
			all, next := make([]int32, len(ix.zone[k])), slices.Clone(count)
			for p, z := range ix.zone[k] {
				all[next[z]] = int32(p)
				next[z]++
			}
			ix.zoneNodes[k] = make([][]int32, ix.nzones[k]+1)
			for z := 1; z <= ix.nzones[k]; z++ {
				ix.zoneNodes[k][z] = all[count[z]:count[z+1]:count[z+1]]
			}
		}
	})
	return ix.zoneNodes[k][z]
}

// withLabel returns the positions of the nodes carrying key=value.
func (ix *index) withLabel(s *Snapshot, p labelPair) []int32 {
	ix.labelsOnce.Do(func() {
		ix.labels = map[labelPair][]int32{}
		for i := range s.Nodes {
			for k, v := range s.Nodes[i].Labels {
				lp := labelPair{k, v}
				ix.labels[lp] = append(ix.labels[lp], int32(i))
			}
		}
	})
	return ix.labels[p]
}

// valuesOf returns, per position, the id (1..n) of the node's value of label key, 0 when
// the node has no such label, and n.
func (ix *index) valuesOf(s *Snapshot, key string) labelValues {
	ix.valuesMu.Lock()
	defer ix.valuesMu.Unlock()
	if v, ok := ix.values[key]; ok {
		return v
	}
	if ix.values == nil {
		ix.values = map[string]labelValues{}
	}
	byValue := map[string]int32{}
	v := labelValues{ids: make([]int32, len(s.Nodes))}
	for i := range s.Nodes {
		val, ok := s.Nodes[i].Labels[key]
		if !ok {
			continue
		}
		id, seen := byValue[val]
		if !seen {
			v.n++
			id = int32(v.n)
			byValue[val] = id
		}
		v.ids[i] = id
	}
	ix.values[key] = v
	return v
}

// named returns the positions of the nodes with this name.
func (ix *index) named(s *Snapshot, name string) []int32 {
	ix.namesOnce.Do(func() {
		ix.names = make(map[string][]int32, len(s.Nodes))
		for i := range s.Nodes {
			ix.names[s.Nodes[i].Name] = append(ix.names[s.Nodes[i].Name], int32(i))
		}
	})
	return ix.names[name]
}

// hasProvider reports whether provider set id lists p.
func (ix *index) hasProvider(set int32, p string) bool {
	return slices.Contains(ix.provSets[set], p)
}

// indexes caches each Snapshot's index, keyed weakly so that a snapshot nobody
// references any more takes its index with it.
var indexes sync.Map // weak.Pointer[Snapshot] → *index

// index returns the snapshot's index, building it on first use and again whenever Nodes
// was replaced or changed length.
func (s *Snapshot) index() *index {
	wp := weak.Make(s)
	if v, ok := indexes.Load(wp); ok {
		if ix := v.(*index); ix.current(s) {
			return ix
		}
	}
	ix := buildIndex(s)
	if _, had := indexes.Swap(wp, ix); !had {
		runtime.AddCleanup(s, func(wp weak.Pointer[Snapshot]) { indexes.Delete(wp) }, wp)
	}
	return ix
}

func (ix *index) current(s *Snapshot) bool {
	if ix.n != len(s.Nodes) {
		return false
	}
	return ix.n == 0 || ix.first == &s.Nodes[0]
}

// Invalidate drops what Schedule derived from the snapshot's nodes. Schedule indexes
// the nodes' static attributes (ID, Name, ClusterID, Providers, Labels,
// AvailabilityZone, PowerZone, RackZone, NetworkZone, HostGroupID) on first use and
// rebuilds the index by itself when Nodes is replaced or changes length; call Invalidate
// after editing one of those attributes in place. Ready, Schedulable, Lifecycle,
// Clusters and Quotas are read afresh by every decision and need no call. Allocations
// and capacities need AllocationsChanged after an edit in place, unless made by Apply.
func (s *Snapshot) Invalidate() {
	indexes.Delete(weak.Make(s))
}

// AllocationsChanged tells Schedule that nodes' allocations or capacities were edited in
// place other than by Apply (on this Snapshot value: Apply on another Snapshot sharing
// the same Nodes counts as an edit in place for this one). A decision reads the
// allocations and capacities of the nodes it looks at afresh, but keeps the sums of CPU
// capacity and allocations per cluster and AZ with the snapshot's index, which Apply
// maintains; after this call the next decision recounts them from the nodes, once.
// Without it, stale sums only bias scoring (SpreadAZ) and which nodes a sampled round
// looks at, never which nodes are feasible: the filters read the nodes. Do not call it
// concurrently with Schedule or Apply on the same snapshot.
func (s *Snapshot) AllocationsChanged() {
	if v, ok := indexes.Load(weak.Make(s)); ok {
		v.(*index).cpuStale.Store(true)
	}
}
