package scheduler

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// mixedFleet is a region of two clusters, both larger than DefaultMaxNodesToScore.
// Cluster 1 has 600 nodes in three AZs laid out one after the other (300, 200, 100
// nodes), racks of 20, capacities of 32, 64 or 96 cores and varied allocations; some
// nodes are not ready, a third carry ssd=yes. Cluster 2 has 150 nodes in two AZs,
// interleaved with cluster 1's in Snapshot.Nodes (every fifth node). Tenant 1 has a quota
// in host group 0.
func mixedFleet() *Snapshot {
	s := &Snapshot{
		Clusters: []Cluster{{ID: 1, Name: "c1", Region: "eu", Weight: 2}, {ID: 2, Name: "c2", Region: "eu", Weight: 1}},
		Quotas:   map[QuotaKey]Quota{{TenantID: 1, HostGroupID: 0}: {VCPUs: 400}},
	}
	c1, c2 := 0, 0
	for i := range 750 {
		n := bigNode(i + 1)
		if i%5 == 4 {
			n.ClusterID, n.AvailabilityZone = 2, "az-x"
			if c2 >= 100 {
				n.AvailabilityZone = "az-y"
			}
			n.RackZone = "x" + itoa(c2/10)
			c2++
		} else {
			n.ClusterID = 1
			switch {
			case c1 < 300:
				n.AvailabilityZone = "az-a"
			case c1 < 500:
				n.AvailabilityZone = "az-b"
			default:
				n.AvailabilityZone = "az-c"
			}
			n.RackZone = "r" + itoa(c1/20)
			c1++
		}
		n.PowerZone, n.NetworkZone = "p"+itoa(i/60), "n"+itoa(i%7)
		n.HostGroupID = i % 3
		n.CPUCapacity = 32 * (1 + i%3)
		n.CPUAllocated = (i * 7) % (n.CPUCapacity / 2)
		n.MemoryMB = 262144
		n.MemoryAllocatedMB = int64((i * 4099) % 131072)
		n.DiskGB, n.DedicatedCoresFree = 4000, 8+i%9
		n.Ready = i%23 != 0
		if i%3 == 0 {
			n.Labels = map[string]string{"ssd": "yes"}
		}
		s.Nodes = append(s.Nodes, n)
	}
	return s
}

// deepCopy copies the snapshot's nodes, clusters and quotas (labels and providers are
// shared: nothing writes them).
func deepCopy(s *Snapshot) *Snapshot {
	return &Snapshot{Clusters: slices.Clone(s.Clusters), Nodes: slices.Clone(s.Nodes), Quotas: maps.Clone(s.Quotas)}
}

// newAttempts gives every cluster tried a new attempt, sharing no buffer with the pool.
func newAttempts() *attempt { return new(attempt) }

// azSums returns the index's CPU sums per cluster ID and AZ name.
func azSums(s *Snapshot) map[string][2]int {
	ix := s.index()
	out := map[string][2]int{}
	for id := range ix.clusters {
		ci := ix.cluster(id)
		for _, z := range ix.azCPU(s, ci) {
			out[itoa(id)+"/"+ix.azNames[z.az]] = [2]int{z.capacity, z.used}
		}
	}
	return out
}

// sameOutcome fails unless two outcomes of Schedule are equal, explanations included.
func sameOutcome(t *testing.T, step int, d Decision, err error, want Decision, wantErr error) {
	t.Helper()
	if fmt.Sprint(err) != fmt.Sprint(wantErr) {
		t.Fatalf("step %d: error %v, from scratch %v", step, err, wantErr)
	}
	var npe, wantNPE *NoPlacementError
	if errors.As(err, &npe) && errors.As(wantErr, &wantNPE) && !reflect.DeepEqual(npe, wantNPE) {
		t.Fatalf("step %d: error %+v, from scratch %+v", step, npe, wantNPE)
	}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("step %d: decision %+v\nfrom scratch %+v", step, d, want)
	}
}

// TestApplyMatchesFromScratch: a long sequence of decisions, each applied to one
// snapshot (its index, AZ sums and the pooled attempts kept from one decision to the
// next), decides exactly as Schedule does on a deep copy indexed afresh, with attempts
// that share no buffer: the sums Apply maintains and the views filled lazily equal those
// computed from scratch. Allocations and capacities edited in place, followed by
// AllocationsChanged, are seen as well.
func TestApplyMatchesFromScratch(t *testing.T) {
	s := mixedFleet()
	rng := rand.New(rand.NewPCG(1, 2))
	flavors := []Flavor{
		{VCPUs: 1, MemoryMB: 2048, DiskGB: 20}, {VCPUs: 2, MemoryMB: 4096, DiskGB: 40},
		{VCPUs: 8, MemoryMB: 32768, DiskGB: 160}, {VCPUs: 4, MemoryMB: 8192, DiskGB: 50, Dedicated: true},
	}
	ratio := DefaultConfig()
	ratio.ScoreSampleRatio = 0.2
	uncapped := DefaultConfig()
	uncapped.MaxNodesToScore = 0
	small := DefaultConfig()
	small.MaxNodesToScore = 7
	configs := []Config{DefaultConfig(), BinpackConfig(), ratio, uncapped, small}
	explains := []func(*Config){
		func(c *Config) { c.Quiet = true },
		func(c *Config) { c.CompactExplain = true },
		func(*Config) {},
	}
	edits := 0
	for step := range 400 {
		r := Request{TenantID: 1 + rng.IntN(3), Region: "eu", Flavor: flavors[rng.IntN(len(flavors))], Count: 1}
		switch rng.IntN(10) {
		case 0:
			r.Count = 2 + rng.IntN(4)
			r.Policy.Zones = []ZoneRule{{Kind: ZoneRack, Mode: ZoneAntiAffinity}}
		case 1:
			r.Count = 3
			r.Policy.NodeLabelSoftAffinities = map[string]string{"ssd": "yes"}
		case 2:
			r.AvailabilityZone = []string{"az-b", "az-y"}[rng.IntN(2)]
		case 3:
			r.Policy.ClusterNames = []string{"c2"}
			r.GroupNodeIDs = []int{5, 10, 15}
		case 4:
			r.Flavor.VCPUs = 200 // fits nowhere
		case 5:
			r.Count, r.AllowPartial = 40, true
			r.Flavor = Flavor{VCPUs: 16, MemoryMB: 1024}
			r.Policy.ClusterNames = []string{"c2"}
		}
		cfg := configs[rng.IntN(len(configs))]
		explains[rng.IntN(len(explains))](&cfg)

		want, wantErr := schedule(deepCopy(s), r, cfg, newAttempts)
		d, err := Schedule(s, r, cfg)
		sameOutcome(t, step, d, err, want, wantErr)
		if err == nil {
			if err := s.Apply(r, d); err != nil {
				t.Fatal(err)
			}
		}
		if got, fresh := azSums(s), azSums(deepCopy(s)); !reflect.DeepEqual(got, fresh) {
			t.Fatalf("step %d: AZ sums %v, from scratch %v", step, got, fresh)
		}

		if step%40 == 39 {
			// Edit allocations and capacities in place, as placement's cache does when it
			// reads changed nodes again.
			for range 30 {
				n := &s.Nodes[rng.IntN(len(s.Nodes))]
				n.CPUCapacity = 32 * (1 + rng.IntN(3))
				n.CPUAllocated = rng.IntN(n.CPUCapacity)
				n.MemoryAllocatedMB = rng.Int64N(n.MemoryMB)
				n.Ready = rng.IntN(10) != 0
			}
			if reflect.DeepEqual(azSums(s), azSums(deepCopy(s))) {
				t.Fatal("the edit changed no AZ sum: it tests nothing")
			}
			s.AllocationsChanged()
			edits++
		}
	}
	if edits == 0 {
		t.Fatal("no edit in place")
	}
}

// TestEpochWrapAround: an attempt whose epoch counters wrap around decides as a new one;
// the stamps left from long before (here planted: the epochs that come next after the
// wrap) do not pass for current.
func TestEpochWrapAround(t *testing.T) {
	s := fleet(600)
	for i := range s.Nodes {
		s.Nodes[i].CPUAllocated = (i * 5) % 20
	}
	a := &attempt{epoch: math.MaxUint32 - 1, roundEpoch: math.MaxUint32 - 4}
	a.seen, a.visitedAt = make([]uint32, 600), make([]uint32, 600)
	for i := range a.seen {
		a.seen[i], a.visitedAt[i] = uint32(1+i%3), uint32(1+i%5)
	}
	reuse := func() *attempt { return a }
	cfg := DefaultConfig()
	cfg.CompactExplain = true
	for step := range 6 {
		r := Request{Flavor: smallFlavor(), Count: 1 + step%3}
		want, wantErr := schedule(deepCopy(s), r, cfg, newAttempts)
		d, err := schedule(s, r, cfg, reuse)
		sameOutcome(t, step, d, err, want, wantErr)
		if err := s.Apply(r, d); err != nil {
			t.Fatal(err)
		}
	}
	if a.epoch > 100 || a.roundEpoch > 100 {
		t.Fatalf("epochs %d and %d did not wrap around", a.epoch, a.roundEpoch)
	}
}

// TestSamplingSpreadsAZs: with DefaultConfig on a fleet much larger than the sample,
// whose AZs each fill a contiguous run of Snapshot.Nodes (as operators add racks),
// consecutive single-VM decisions still go to every AZ in turn: a sampled round looks at
// the nodes interleaved across AZs, so SpreadAZ sees every AZ in its sample.
func TestSamplingSpreadsAZs(t *testing.T) {
	s := fleet(1500)
	for i := range s.Nodes {
		s.Nodes[i].AvailabilityZone = "az" + itoa(i/500)
	}
	cfg := DefaultConfig()
	cfg.CompactExplain = true
	per := map[string]int{}
	var window []string
	for i := range 300 {
		r := Request{TenantID: i % 7, Flavor: smallFlavor()}
		d, err := Schedule(s, r, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			skipped := 0
			for n := range d.Explanation.Len() {
				if d.Explanation.Skipped(n) {
					skipped++
				}
			}
			if skipped != 1500-DefaultMaxNodesToScore {
				t.Fatalf("%d nodes skipped, want all but the sample of %d", skipped, DefaultMaxNodesToScore)
			}
		}
		if err := s.Apply(r, d); err != nil {
			t.Fatal(err)
		}
		az := s.Nodes[d.Placements[0].NodeID-1].AvailabilityZone
		per[az]++
		if window = append(window, az); len(window) > 6 {
			window = window[1:]
		}
		if len(window) == 6 {
			in := map[string]bool{}
			for _, w := range window {
				in[w] = true
			}
			if len(in) != 3 {
				t.Fatalf("decisions %d-%d went to %v only", i-5, i, window)
			}
		}
	}
	for _, az := range []string{"az0", "az1", "az2"} {
		if n := per[az]; n < 95 || n > 105 {
			t.Fatalf("VMs per AZ %v, want about 100 each", per)
		}
	}
}

// TestSamplingInfeasibleLooksEverywhere: sampling never turns a placement into a
// failure: with fewer feasible nodes than the sample, every node is looked at and the
// decision is the one without sampling; with none, the NoPlacementError counts and
// explains every node.
func TestSamplingInfeasibleLooksEverywhere(t *testing.T) {
	s := fleet(1200)
	for i := range s.Nodes {
		s.Nodes[i].CPUAllocated = 31
		if i%40 == 17 { // 30 nodes with room for one VM
			s.Nodes[i].CPUAllocated = 30
		}
	}
	cfg := DefaultConfig()
	uncapped := cfg
	uncapped.MaxNodesToScore = 0
	for _, count := range []int{1, 3} {
		r := Request{Flavor: smallFlavor(), Count: count}
		d, err := Schedule(s, r, cfg)
		all, errAll := Schedule(s, r, uncapped)
		if err != nil || errAll != nil {
			t.Fatal(err, errAll)
		}
		if !reflect.DeepEqual(d, all) {
			t.Fatalf("%d VMs: sampled decision %v, without sampling %v", count, d.Placements, all.Placements)
		}
		for i := range d.Explanation.Len() {
			if d.Explanation.Skipped(i) {
				t.Fatalf("%d VMs: node %d skipped, with only 30 feasible", count, d.Explanation.NodeID(i))
			}
		}
	}

	// 30 nodes with room for one VM each: the 31st fits nowhere.
	_, err := Schedule(s, Request{Flavor: smallFlavor(), Count: 31}, cfg)
	var npe *NoPlacementError
	if !errors.As(err, &npe) || npe.Placed != 30 || npe.Reasons["CPUFit"] != 1200 || len(npe.Reasons) != 1 {
		t.Fatalf("err = %v, want CPUFit rejecting all 1200 nodes after 30 placed", err)
	}
	_, err = Schedule(s, Request{Flavor: Flavor{VCPUs: 64}}, cfg)
	if !errors.As(err, &npe) || npe.Reasons["CPUFit"] != 1200 || len(npe.Reasons) != 1 {
		t.Fatalf("err = %v, want CPUFit rejecting all 1200 nodes", err)
	}
	e := npe.Explanation
	if e.Len() != 1200 {
		t.Fatalf("explained %d nodes, want 1200", e.Len())
	}
	for i := range e.Len() {
		if f, _, ok := e.Rejected(i); !ok || f != "CPUFit" {
			t.Fatalf("node %d: rejected by %q (%v), want CPUFit", e.NodeID(i), f, ok)
		}
	}
}

// TestSampleSize: a sampled round stops at the sample, not at the end of a whole chunk:
// exactly MaxNodesToScore nodes when all are feasible, and less than minChunk more when
// some are not.
func TestSampleSize(t *testing.T) {
	s := fleet(2000)
	cfg := DefaultConfig()
	cfg.CompactExplain = true
	count := func(d Decision) (looked, scored int) {
		e := d.Explanation
		for i := range e.Len() {
			if !e.Skipped(i) {
				looked++
				if _, _, rejected := e.Rejected(i); !rejected {
					scored++
				}
			}
		}
		return looked, scored
	}
	d, err := Schedule(s, Request{Flavor: smallFlavor()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if looked, scored := count(d); looked != DefaultMaxNodesToScore || scored != DefaultMaxNodesToScore {
		t.Fatalf("looked at %d nodes, scored %d; want %d and %d", looked, scored, DefaultMaxNodesToScore, DefaultMaxNodesToScore)
	}
	for i := range s.Nodes {
		s.Nodes[i].Ready = i%3 != 0
	}
	d, err = Schedule(s, Request{Flavor: smallFlavor()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if looked, scored := count(d); scored < DefaultMaxNodesToScore || scored >= DefaultMaxNodesToScore+minChunk || looked >= chunk {
		t.Fatalf("looked at %d nodes, scored %d; want %d to %d scored", looked, scored, DefaultMaxNodesToScore, DefaultMaxNodesToScore+minChunk-1)
	}
	for _, tc := range []struct{ cfg, ratio, k, want int }{
		{0, 0, 5000, 5000}, {100, 0, 5000, 100}, {100, 0, 80, 80}, {100, 10, 5000, 100},
		{1000, 10, 5000, 500}, {0, 10, 5000, 500}, {0, 10, 300, 100}, {50, 10, 300, 50},
	} {
		c := Config{MaxNodesToScore: tc.cfg, ScoreSampleRatio: float64(tc.ratio) / 100}
		if got := sampleSize(&c, tc.k); got != tc.want {
			t.Fatalf("MaxNodesToScore %d, ratio %d%%, %d nodes: sample %d, want %d", tc.cfg, tc.ratio, tc.k, got, tc.want)
		}
	}
}

// TestVisitOrder: a cluster's views interleaved across its AZs in proportion to their
// sizes: every view once, each AZ's in ascending order, and any run of consecutive
// entries (wrapping around) holds each AZ in its share, give or take two.
func TestVisitOrder(t *testing.T) {
	s := fleet(120)
	for i := range s.Nodes {
		switch {
		case i < 60:
			s.Nodes[i].AvailabilityZone = "a"
		case i < 90:
			s.Nodes[i].AvailabilityZone = "b"
		case i < 110:
			s.Nodes[i].AvailabilityZone = "c"
		default:
			s.Nodes[i].AvailabilityZone = "d"
		}
	}
	ix := s.index()
	visit := ix.visitOrder(ix.cluster(1))
	k := len(visit)
	if k != 120 {
		t.Fatalf("%d views, want 120", k)
	}
	azOf := func(c int32) string { return s.Nodes[ix.clusters[1][c]].AvailabilityZone }
	seen, last := map[int32]bool{}, map[string]int32{}
	for _, c := range visit {
		if seen[c] {
			t.Fatalf("view %d twice", c)
		}
		seen[c] = true
		if l, ok := last[azOf(c)]; ok && l > c {
			t.Fatalf("AZ %s: view %d after %d", azOf(c), c, l)
		}
		last[azOf(c)] = c
	}
	size := map[string]int{"a": 60, "b": 30, "c": 20, "d": 10}
	for w := 1; w <= k; w++ {
		for start := range k {
			got := map[string]int{}
			for i := range w {
				got[azOf(visit[(start+i)%k])]++
			}
			for az, n := range size {
				share := float64(w*n) / float64(k)
				if g := float64(got[az]); g < math.Floor(share)-2 || g > math.Ceil(share)+2 {
					t.Fatalf("entries %d..%d hold %d of AZ %s, want about %.1f", start, start+w-1, got[az], az, share)
				}
			}
		}
	}
}
