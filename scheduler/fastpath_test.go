package scheduler

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// refSchedule is the placement core written the plain way: every VM of the group, every
// node of the cluster through Filter then Score, one node at a time. The fast path
// (batch forms, chunks, incremental rounds, compact records) must decide exactly as it
// does when every node is evaluated.
func refSchedule(s *Snapshot, r Request, cfg Config) (Decision, error) {
	if r.Count == 0 {
		r.Count = 1
	}
	if r.Count < 0 || r.Flavor.VCPUs <= 0 || r.Flavor.MemoryMB < 0 || r.Flavor.DiskGB < 0 {
		return Decision{}, ErrInvalidRequest
	}
	scorers, err := cfg.scorers()
	if err != nil {
		return Decision{}, err
	}
	filters := cfg.filters()
	type cand struct {
		c       *Cluster
		freeCPU int
		freeMem int64
	}
	var clusters []cand
	excluded := 0
	for i := range s.Clusters {
		c := &s.Clusters[i]
		if (r.Region != "" && c.Region != r.Region) ||
			(len(r.Policy.ClusterNames) > 0 && !contains(r.Policy.ClusterNames, c.Name)) ||
			!hasAll(c.Labels, r.Policy.ClusterLabels) {
			excluded++
			continue
		}
		cc := cand{c: c}
		for j := range s.Nodes {
			n := &s.Nodes[j]
			if n.ClusterID == c.ID && n.Ready && n.Schedulable {
				cc.freeCPU += n.CPUCapacity - n.CPUAllocated
				cc.freeMem += n.MemoryMB - n.MemoryAllocatedMB
			}
		}
		clusters = append(clusters, cc)
	}
	sort.SliceStable(clusters, func(i, j int) bool {
		a, b := clusters[i], clusters[j]
		switch {
		case a.c.Weight != b.c.Weight:
			return a.c.Weight > b.c.Weight
		case a.freeCPU != b.freeCPU:
			return a.freeCPU > b.freeCPU
		case a.freeMem != b.freeMem:
			return a.freeMem > b.freeMem
		}
		return a.c.ID < b.c.ID
	})
	type result struct {
		d       Decision
		placed  int
		reasons map[string]int
	}
	try := func(c *Cluster) result {
		st := newState(s, &r)
		az := map[string]*azLoad{}
		var views []NodeView
		for i := range s.Nodes {
			n := &s.Nodes[i]
			if n.ClusterID != c.ID {
				continue
			}
			l := az[n.AvailabilityZone]
			if l == nil {
				l = &azLoad{name: n.AvailabilityZone}
				az[n.AvailabilityZone] = l
			}
			l.capacity += n.CPUCapacity
			l.used += n.CPUAllocated
			v := newNodeView(n)
			v.az = l
			views = append(views, v)
		}
		res := result{d: Decision{ClusterID: c.ID}}
		nodes := make([]NodeResult, len(views))
		for range r.Count {
			best := -1
			for i := range views {
				v := &views[i]
				nr := NodeResult{NodeID: v.ID}
				for _, f := range filters {
					if stt := f.Filter(st, v); !stt.OK() {
						nr.Rejected, nr.Code, nr.Reason = f.Name(), stt.Code, stt.Reason
						break
					}
				}
				if nr.Rejected == "" {
					nr.Scores = map[string]float64{}
					for _, w := range scorers {
						sc := w.Score(st, v)
						nr.Scores[w.Name()] = sc
						nr.Total += float64(w.weight * sc)
					}
					if best < 0 || nr.Total > nodes[best].Total || (nr.Total == nodes[best].Total && v.ID < nodes[best].NodeID) {
						best = i
					}
				}
				nodes[i] = nr
			}
			if best < 0 {
				res.reasons = map[string]int{}
				for _, nr := range nodes {
					if nr.Rejected != "" {
						res.reasons[nr.Rejected]++
					}
				}
				break
			}
			res.d.Placements = append(res.d.Placements, Placement{NodeID: views[best].ID, Total: nodes[best].Total})
			st.place(&views[best])
			res.placed++
		}
		res.d.Unplaced = r.Count - res.placed
		if !cfg.Quiet && !cfg.CompactExplain {
			res.d.Nodes = nodes
		}
		return res
	}
	reasons := map[string]int{}
	if excluded > 0 {
		reasons[ReasonCluster] = excluded
	}
	var best *result
	quota := false
	for _, c := range clusters {
		res := try(c.c)
		if res.placed == r.Count {
			return res.d, nil
		}
		for k, n := range res.reasons {
			reasons[k] += n
		}
		quota = quota || res.reasons["Quota"] > 0
		if best == nil || res.placed > best.placed {
			best = &res
		}
	}
	if r.AllowPartial && best != nil && best.placed > 0 {
		return best.d, nil
	}
	e := &NoPlacementError{Err: ErrNoCapacity, Reasons: reasons}
	if quota {
		e.Err = ErrQuotaExceeded
	}
	if best != nil {
		e.Placed = best.placed
	}
	return Decision{}, e
}

// randomFleet builds a messy snapshot: several clusters, missing zones, odd labels,
// cordoned and full nodes, quotas.
func randomFleet(rng *rand.Rand) *Snapshot {
	s := &Snapshot{Quotas: map[QuotaKey]Quota{}}
	nc := 1 + rng.IntN(3)
	for c := 1; c <= nc; c++ {
		s.Clusters = append(s.Clusters, Cluster{ID: c, Name: "c" + itoa(c), Region: []string{"eu", "us"}[rng.IntN(2)],
			Weight: rng.IntN(2), Labels: map[string]string{"tier": []string{"gold", "silver"}[rng.IntN(2)]}})
	}
	pick := func(prefix string, n int) string {
		if rng.IntN(12) == 0 {
			return ""
		}
		return prefix + itoa(rng.IntN(n))
	}
	n := 1 + rng.IntN(300)
	if rng.IntN(4) == 0 {
		n = 600 + rng.IntN(1500)
	}
	for i := range n {
		node := Node{
			ID: 1000 + i*3, Name: "h" + itoa(i), ClusterID: 1 + rng.IntN(nc+1)%nc + rng.IntN(2)*0,
			Ready: rng.IntN(15) != 0, Schedulable: rng.IntN(15) != 0,
			AvailabilityZone: pick("az", 3), PowerZone: pick("p", 6), RackZone: pick("r", 12), NetworkZone: pick("n", 5),
			HostGroupID: rng.IntN(3),
			CPUCapacity: []int{0, 8, 16, 64, 64}[rng.IntN(5)], MemoryMB: []int64{0, 16384, 65536, 262144}[rng.IntN(4)],
			DiskGB: []int64{100, 1000}[rng.IntN(2)], DedicatedCoresFree: rng.IntN(8),
		}
		node.CPUAllocated = rng.IntN(node.CPUCapacity/2 + 1)
		node.MemoryAllocatedMB = rng.Int64N(node.MemoryMB/2 + 1)
		node.DiskAllocatedGB = rng.Int64N(node.DiskGB/2 + 1)
		if rng.IntN(10) == 0 { // full
			node.CPUAllocated, node.MemoryAllocatedMB = node.CPUCapacity, node.MemoryMB
		}
		switch rng.IntN(4) {
		case 0:
			node.Providers = []string{"libvirt"}
		case 1:
			node.Providers = []string{"vmware", "libvirt"}
		case 2:
			node.Providers = []string{"vmware"}
		}
		if rng.IntN(3) > 0 {
			node.Labels = map[string]string{"gen": []string{"g1", "g2", "g3"}[rng.IntN(3)]}
			if rng.IntN(2) == 0 {
				node.Labels["ssd"] = "yes"
			}
		}
		s.Nodes = append(s.Nodes, node)
	}
	for t := 1; t <= 3; t++ {
		for hg := range 3 {
			if rng.IntN(2) == 0 {
				s.Quotas[QuotaKey{TenantID: t, HostGroupID: hg}] = Quota{
					VCPUs: rng.IntN(60), UsedVCPUs: rng.IntN(20), CPUPercent: float64(rng.IntN(3)) * 25, GroupCores: 100,
					MemoryMB: rng.Int64N(200000), StorageGB: rng.Int64N(3000),
				}
			}
		}
	}
	return s
}

func randomRequest(rng *rand.Rand, s *Snapshot) Request {
	labels := func() map[string]string {
		m := map[string]string{}
		for range rng.IntN(3) {
			m[[]string{"gen", "ssd", "gpu"}[rng.IntN(3)]] = []string{"g1", "g2", "yes"}[rng.IntN(3)]
		}
		return m
	}
	r := Request{
		TenantID: 1 + rng.IntN(3), Region: []string{"", "eu", "us"}[rng.IntN(3)], Count: rng.IntN(7),
		Flavor:       Flavor{VCPUs: 1 + rng.IntN(6), MemoryMB: rng.Int64N(9000), DiskGB: rng.Int64N(100), Dedicated: rng.IntN(8) == 0},
		AllowPartial: rng.IntN(3) == 0,
	}
	if rng.IntN(2) == 0 {
		r.Provider = []string{"libvirt", "vmware", "libvirt", "xen"}[rng.IntN(4)]
	}
	p := &r.Policy
	if rng.IntN(6) == 0 {
		p.NodeLabelHardAffinities = labels()
	}
	if rng.IntN(6) == 0 {
		p.NodeLabelHardAntiAffinities = labels()
	}
	if rng.IntN(2) == 0 {
		p.NodeLabelSoftAffinities = labels()
	}
	if rng.IntN(3) == 0 {
		p.NodeLabelSoftAntiAffinities = labels()
	}
	if rng.IntN(6) == 0 {
		for range 1 + rng.IntN(40) {
			p.NodeNames = append(p.NodeNames, "h"+itoa(rng.IntN(len(s.Nodes)+3)))
		}
	}
	if rng.IntN(8) == 0 {
		p.ClusterNames = []string{"c1", "c3"}
	}
	for range rng.IntN(3) {
		z := ZoneRule{Kind: []string{ZonePower, ZoneRack, ZoneNetwork, ZoneRack, "MOON"}[rng.IntN(5)],
			Mode: []string{ZoneAntiAffinity, ZoneAntiAffinity, ZoneAffinity}[rng.IntN(3)]}
		if z.Mode == ZoneAffinity && rng.IntN(2) == 0 {
			z.Zone = []string{"p1", "r3", "n2", "nowhere"}[rng.IntN(4)]
		}
		if rng.IntN(20) == 0 {
			z.Mode = "SIDEWAYS"
		}
		p.Zones = append(p.Zones, z)
	}
	if rng.IntN(3) == 0 {
		for range 1 + rng.IntN(4) {
			r.GroupNodeIDs = append(r.GroupNodeIDs, 1000+3*rng.IntN(len(s.Nodes)+2)) // some unknown
		}
	}
	return r
}

func randomConfig(rng *rand.Rand) Config {
	var cfg Config
	switch rng.IntN(4) {
	case 0, 1:
		cfg = DefaultConfig()
	case 2:
		cfg = BinpackConfig()
	case 3:
		cfg = DefaultConfig()
		cfg.Weights["MostAllocated"] = 0.5
		cfg.Filters = []Filter{ZonePolicy{}, Ready{}, CPUFit{}, QuotaFit{}, MemoryFit{}, Provider{}, NodeLabelHardAffinity{}}
	}
	cfg.RequireQuota = rng.IntN(4) == 0
	if rng.IntN(40) == 0 { // a scorer with nothing to score and a weight that still counts
		cfg.Weights["NodeLabelSoftAntiAffinity"] = math.Inf(1)
	}
	return cfg
}

// outcome is a decision or error in comparable form.
func outcome(d Decision, err error) string {
	var npe *NoPlacementError
	if errors.As(err, &npe) {
		return fmt.Sprintf("error %v reasons %v placed %d", npe.Err, npe.Reasons, npe.Placed)
	}
	if err != nil {
		return "error " + err.Error()
	}
	d.Explanation = nil
	return fmt.Sprintf("%+v", d)
}

func withSwitches(noBatch, noIncremental bool, f func()) {
	testNoBatch, testNoIncremental = noBatch, noIncremental
	defer func() { testNoBatch, testNoIncremental = false, false }()
	f()
}

// TestFastPathMatchesReference compares the fast path with refSchedule, and with itself
// with batch forms or incremental rounds switched off, on random fleets and requests.
func TestFastPathMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 7))
	cases := 1500
	if testing.Short() {
		cases = 200
	}
	for i := range cases {
		s := randomFleet(rng)
		r := randomRequest(rng, s)
		cfg := randomConfig(rng)
		sample := rng.IntN(4) == 0
		if sample {
			cfg.ScoreSampleRatio = []float64{0.01, 0.3, 0.5}[rng.IntN(3)]
		}
		got := outcome(Schedule(s, r, cfg))
		if !sample {
			if want := outcome(refSchedule(s, r, cfg)); got != want {
				t.Fatalf("case %d: request %+v config %+v\nfast path: %s\nreference: %s", i, r, cfg, got, want)
			}
		}
		for _, sw := range [][2]bool{{true, false}, {false, true}, {true, true}} {
			var other string
			withSwitches(sw[0], sw[1], func() { other = outcome(Schedule(s, r, cfg)) })
			if other != got {
				t.Fatalf("case %d (no batch %v, no incremental %v): request %+v\nfast path: %s\nother:     %s", i, sw[0], sw[1], r, got, other)
			}
		}
		// The compact explanation says the same as Decision.Nodes.
		if d, err := Schedule(s, r, cfg); err == nil {
			c := cfg
			c.CompactExplain = true
			dc, _ := Schedule(s, r, c)
			if dc.Nodes != nil || fmt.Sprintf("%+v", dc.Explanation.Nodes()) != fmt.Sprintf("%+v", d.Nodes) { // NaN-proof
				t.Fatalf("case %d: compact explanation differs", i)
			}
		}
	}
}
