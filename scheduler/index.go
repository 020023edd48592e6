package scheduler

import (
	"runtime"
	"slices"
	"strings"
	"sync"
	"weak"
)

// index is what Schedule derives once per Snapshot from the nodes' static attributes
// (ID, Name, ClusterID, Providers, Labels, AvailabilityZone, zones, HostGroupID), so a
// decision compares small integers instead of strings and looks nothing up per node.
// Allocations, Ready, Schedulable, Clusters and Quotas are never indexed: every decision
// reads them afresh, which is what lets Snapshot.Apply keep a cached snapshot warm.
//
// Positions ("pos") are indexes into Snapshot.Nodes.
type index struct {
	first *Node // &Nodes[0] when built: a replaced Nodes slice is detected
	n     int

	ids      []int           // per position: the node's ID
	clusters map[int][]int32 // cluster ID → positions of its nodes, ascending
	local    []int32         // per position: its index in its cluster's list

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
	ix := &index{n: n, clusters: map[int][]int32{}}
	if n > 0 {
		ix.first = &s.Nodes[0]
	}
	ix.az = make([]int32, n)
	ix.ids = make([]int, n)
	ix.local = make([]int32, n)
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
	lastCluster, lastList := 0, []int32(nil)
	for i := range s.Nodes {
		nd := &s.Nodes[i]
		p := int32(i)
		if lastList == nil || nd.ClusterID != lastCluster {
			if lastList != nil {
				ix.clusters[lastCluster] = lastList
			}
			lastCluster, lastList = nd.ClusterID, ix.clusters[nd.ClusterID]
		}
		ix.ids[i] = nd.ID
		ix.local[i] = int32(len(lastList))
		lastList = append(lastList, p)
		ix.az[i] = azs.id(nd.AvailabilityZone)
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
	ix.azNames = azs.names
	for k := range zones {
		ix.zoneIDs[k] = zones[k].ids
		ix.nzones[k] = len(zones[k].names)
	}
	return ix
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
// after editing one of those attributes in place. Allocations, Ready, Schedulable,
// Clusters and Quotas are read afresh by every decision and need no call.
func (s *Snapshot) Invalidate() {
	indexes.Delete(weak.Make(s))
}
