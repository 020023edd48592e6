package scheduler

import (
	"errors"
	"reflect"
	"testing"
)

// fleet builds a snapshot of one cluster with nodes 1..n, each in its own rack, power
// and network zone, AZs alternating az1/az2.
func fleet(n int) *Snapshot {
	s := &Snapshot{Clusters: []Cluster{{ID: 1, Name: "c1", Region: "eu", Weight: 1}}}
	for i := 1; i <= n; i++ {
		node := bigNode(i)
		node.RackZone, node.PowerZone, node.NetworkZone = "r"+itoa(i), "p"+itoa(i), "n"+itoa(i)
		node.AvailabilityZone = "az" + itoa(1+i%2)
		s.Nodes = append(s.Nodes, node)
	}
	return s
}

func placedOn(d Decision) []int {
	var ids []int
	for _, p := range d.Placements {
		ids = append(ids, p.NodeID)
	}
	return ids
}

func TestScheduleSingleVMExplainsEveryNode(t *testing.T) {
	s := fleet(3)
	s.Nodes[0].Ready = false
	s.Nodes[1].CPUAllocated = 16 // node 2 half full, node 3 empty
	d, err := Schedule(s, Request{Region: "eu", Flavor: smallFlavor()}, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if got := placedOn(d); !reflect.DeepEqual(got, []int{3}) {
		t.Fatalf("placed on %v, want [3] (least allocated)", got)
	}
	if len(d.Nodes) != 3 {
		t.Fatalf("explained %d nodes, want 3", len(d.Nodes))
	}
	if r := d.Nodes[0]; r.Rejected != "Ready" || r.Code != "NOT_READY" || r.Scores != nil {
		t.Fatalf("node 1 explained as %+v, want rejected by Ready", r)
	}
	n2, n3 := d.Nodes[1], d.Nodes[2]
	if n2.Rejected != "" || n3.Total <= n2.Total || n3.Scores["LeastAllocated"] <= n2.Scores["LeastAllocated"] {
		t.Fatalf("scores: node 2 %+v, node 3 %+v", n2, n3)
	}
	if d.Placements[0].Total != n3.Total {
		t.Fatalf("placement total %v, node total %v", d.Placements[0].Total, n3.Total)
	}

	cfg := DefaultConfig()
	cfg.Quiet = true
	q, err := Schedule(s, Request{Region: "eu", Flavor: smallFlavor()}, cfg)
	if err != nil || q.Nodes != nil || !reflect.DeepEqual(q.Placements, d.Placements) {
		t.Fatalf("quiet decision %+v (%v), want the same placements and no explanation", q, err)
	}
}

func TestScheduleIsPure(t *testing.T) {
	s := fleet(4)
	before := fleet(4)
	r := Request{Region: "eu", Flavor: smallFlavor(), Count: 3,
		Policy: Policy{Zones: []ZoneRule{{Kind: ZoneRack, Mode: ZoneAntiAffinity}}}}
	d1, err1 := Schedule(s, r, DefaultConfig())
	d2, err2 := Schedule(s, r, DefaultConfig())
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if !reflect.DeepEqual(d1, d2) {
		t.Fatal("same inputs gave different decisions")
	}
	if !reflect.DeepEqual(s, before) {
		t.Fatal("Schedule modified the snapshot")
	}
}

func TestScheduleTiesGoToLowestNodeID(t *testing.T) {
	s := fleet(4)
	for i := range s.Nodes {
		s.Nodes[i].AvailabilityZone = "az1"
	}
	d, err := Schedule(s, Request{Flavor: smallFlavor()}, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if got := placedOn(d); !reflect.DeepEqual(got, []int{1}) {
		t.Fatalf("placed on %v, want [1]", got)
	}
}

func TestScheduleGroupCapacityWithinGroup(t *testing.T) {
	s := fleet(2)
	s.Nodes[0].CPUCapacity = 4 // room for two 2-core VMs
	s.Nodes[1].CPUCapacity = 2 // room for one
	d, err := Schedule(s, Request{Flavor: smallFlavor(), Count: 3}, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	count := map[int]int{}
	for _, id := range placedOn(d) {
		count[id]++
	}
	if count[1] != 2 || count[2] != 1 {
		t.Fatalf("placements %v, want two on node 1 and one on node 2", count)
	}
	_, err = Schedule(s, Request{Flavor: smallFlavor(), Count: 4}, DefaultConfig())
	var npe *NoPlacementError
	if !errors.As(err, &npe) || !errors.Is(err, ErrNoCapacity) || npe.Reasons["CPUFit"] != 2 || npe.Placed != 3 {
		t.Fatalf("err = %v, want no capacity with CPUFit rejecting both nodes after 3 placed", err)
	}
}

func TestScheduleAntiAffinityAcrossGroup(t *testing.T) {
	s := fleet(4)
	s.Nodes[3].RackZone = "r1" // node 4 shares node 1's rack
	rack := Policy{Zones: []ZoneRule{{Kind: ZoneRack, Mode: ZoneAntiAffinity}}}
	tests := []struct {
		name    string
		count   int
		partial bool
		placed  int
		err     error
	}{
		{"three racks, three VMs", 3, false, 3, nil},
		{"three racks, four VMs", 4, false, 0, ErrNoCapacity},
		{"three racks, four VMs, partial", 4, true, 3, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Schedule(s, Request{Flavor: smallFlavor(), Count: tc.count, Policy: rack, AllowPartial: tc.partial}, DefaultConfig())
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if len(d.Placements) != tc.placed || (tc.err == nil && d.Unplaced != tc.count-tc.placed) {
				t.Fatalf("placed %v (unplaced %d), want %d", placedOn(d), d.Unplaced, tc.placed)
			}
			racks := map[string]bool{}
			for _, id := range placedOn(d) {
				r := s.Nodes[id-1].RackZone
				if racks[r] {
					t.Fatalf("two VMs in rack %s: %v", r, placedOn(d))
				}
				racks[r] = true
			}
			var npe *NoPlacementError
			if errors.As(err, &npe) && npe.Reasons["ZonePolicy"] != 4 {
				t.Fatalf("reasons %v, want ZonePolicy rejecting all 4 nodes", npe.Reasons)
			}
		})
	}
}

func TestScheduleZoneAffinity(t *testing.T) {
	s := fleet(4)
	s.Nodes[2].PowerZone = "p2" // nodes 2 and 3 share power zone p2
	for _, tc := range []struct {
		name string
		rule ZoneRule
		want []int
	}{
		{"named zone", ZoneRule{Kind: ZonePower, Mode: ZoneAffinity, Zone: "p2"}, []int{2, 3}},
		{"first VM's zone", ZoneRule{Kind: ZonePower, Mode: ZoneAffinity}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Schedule(s, Request{Flavor: smallFlavor(), Count: 2, Policy: Policy{Zones: []ZoneRule{tc.rule}}}, DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			zones := map[string]bool{}
			for _, id := range placedOn(d) {
				zones[s.Nodes[id-1].PowerZone] = true
			}
			if len(zones) != 1 {
				t.Fatalf("placed %v across power zones %v, want one zone", placedOn(d), zones)
			}
			if tc.rule.Zone != "" && !zones[tc.rule.Zone] {
				t.Fatalf("placed in %v, want %s", zones, tc.rule.Zone)
			}
		})
	}
}

func TestScheduleClusterChoice(t *testing.T) {
	mk := func() *Snapshot {
		s := &Snapshot{Clusters: []Cluster{
			{ID: 1, Name: "small-heavy", Region: "eu", Weight: 10, Labels: map[string]string{"tier": "gold"}},
			{ID: 2, Name: "big", Region: "eu", Weight: 5},
			{ID: 3, Name: "big-twin", Region: "eu", Weight: 5},
			{ID: 4, Name: "elsewhere", Region: "us", Weight: 99},
		}}
		for i, c := range []int{1, 2, 2, 3, 3, 3, 4} {
			n := bigNode(i + 1)
			n.ClusterID = c
			n.RackZone = "r" + itoa(i+1)
			s.Nodes = append(s.Nodes, n)
		}
		return s
	}
	antiRack := []ZoneRule{{Kind: ZoneRack, Mode: ZoneAntiAffinity}}
	tests := []struct {
		name    string
		req     Request
		cluster int
	}{
		{"highest weight", Request{Region: "eu"}, 1},
		{"group too big for the heaviest", Request{Region: "eu", Count: 2, Policy: Policy{Zones: antiRack}}, 3},
		{"weight tie broken by free capacity", Request{Region: "eu", Policy: Policy{ClusterNames: []string{"big", "big-twin"}}}, 3},
		{"by name", Request{Region: "eu", Policy: Policy{ClusterNames: []string{"big"}}}, 2},
		{"by label", Request{Region: "eu", Policy: Policy{ClusterLabels: map[string]string{"tier": "gold"}}}, 1},
		{"region", Request{Region: "us"}, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := mk()
			tc.req.Flavor = smallFlavor()
			d, err := Schedule(s, tc.req, DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			if d.ClusterID != tc.cluster {
				t.Fatalf("cluster %d, want %d", d.ClusterID, tc.cluster)
			}
			for _, id := range placedOn(d) {
				if s.Nodes[id-1].ClusterID != tc.cluster {
					t.Fatalf("node %d is outside cluster %d", id, tc.cluster)
				}
			}
		})
	}
	t.Run("no cluster matches", func(t *testing.T) {
		_, err := Schedule(mk(), Request{Region: "ap", Flavor: smallFlavor()}, DefaultConfig())
		var npe *NoPlacementError
		if !errors.As(err, &npe) || !errors.Is(err, ErrNoCapacity) || npe.Reasons[ReasonCluster] != 4 {
			t.Fatalf("err = %v, want no capacity with 4 clusters excluded", err)
		}
	})
	t.Run("group never spans clusters", func(t *testing.T) {
		_, err := Schedule(mk(), Request{Region: "eu", Count: 4, Flavor: smallFlavor(), Policy: Policy{Zones: antiRack}}, DefaultConfig())
		var npe *NoPlacementError
		if !errors.As(err, &npe) || !errors.Is(err, ErrNoCapacity) {
			t.Fatalf("err = %v, want no capacity: 4 racks exist only across clusters", err)
		}
		// The explanation covers every node of the three clusters tried, in the order
		// tried (1, then 3 with more free capacity than 2): each cluster's last round
		// found every rack of its own taken.
		e := npe.Explanation
		var got []int
		for i := range e.Len() {
			got = append(got, e.NodeID(i))
			if f, st, ok := e.Rejected(i); !ok || f != "ZonePolicy" || st.Code != "ZONE_ANTI_AFFINITY" || st.Reason == "" {
				t.Fatalf("node %d: rejected by %q %+v (%v), want ZonePolicy ZONE_ANTI_AFFINITY", e.NodeID(i), f, st, ok)
			}
		}
		if !reflect.DeepEqual(got, []int{1, 4, 5, 6, 2, 3}) {
			t.Fatalf("explained nodes %v, want [1 4 5 6 2 3]", got)
		}
	})
}

func TestScheduleQuota(t *testing.T) {
	s := fleet(2)
	s.Quotas = map[QuotaKey]Quota{{TenantID: 9, HostGroupID: 0}: {VCPUs: 5}}
	r := Request{TenantID: 9, Flavor: smallFlavor(), Count: 2}
	if _, err := Schedule(s, r, DefaultConfig()); err != nil {
		t.Fatalf("two 2-core VMs within 5 vCPUs: %v", err)
	}
	r.Count = 3
	_, err := Schedule(s, r, DefaultConfig())
	var npe *NoPlacementError
	if !errors.Is(err, ErrQuotaExceeded) || !errors.As(err, &npe) || npe.Reasons["Quota"] != 2 {
		t.Fatalf("err = %v, want quota exceeded on both nodes", err)
	}
	r.TenantID, r.Count = 8, 1
	cfg := DefaultConfig()
	cfg.RequireQuota = true
	if _, err := Schedule(s, r, cfg); !errors.Is(err, ErrQuotaExceeded) {
		t.Fatalf("tenant without quota, quota required: err = %v", err)
	}
}

func TestScheduleScoringPolicies(t *testing.T) {
	s := fleet(3)
	s.Nodes[0].CPUAllocated = 20
	s.Nodes[2].Labels = map[string]string{"ssd": "yes"}
	for i := range s.Nodes {
		s.Nodes[i].AvailabilityZone = "az1"
	}
	tests := []struct {
		name   string
		policy Policy
		cfg    Config
		want   int
	}{
		{"spread picks an empty node", Policy{}, DefaultConfig(), 2},
		{"binpack picks the fullest", Policy{}, BinpackConfig(), 1},
		{"soft affinity", Policy{NodeLabelSoftAffinities: map[string]string{"ssd": "yes"}}, DefaultConfig(), 3},
		{"soft anti-affinity", Policy{NodeLabelSoftAntiAffinities: map[string]string{"ssd": "yes"}}, BinpackConfig(), 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Schedule(s, Request{Flavor: smallFlavor(), Policy: tc.policy}, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := placedOn(d); !reflect.DeepEqual(got, []int{tc.want}) {
				t.Fatalf("placed on %v, want [%d]", got, tc.want)
			}
		})
	}
}

func TestScheduleRejectsBadInput(t *testing.T) {
	s := fleet(1)
	if _, err := Schedule(s, Request{Flavor: Flavor{VCPUs: 0}}, DefaultConfig()); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("zero vCPUs: err = %v", err)
	}
	if _, err := Schedule(s, Request{Flavor: smallFlavor(), Count: -1}, DefaultConfig()); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("negative count: err = %v", err)
	}
	cfg := Config{Weights: map[string]float64{"Nope": 1}}
	if _, err := Schedule(s, Request{Flavor: smallFlavor()}, cfg); !errors.Is(err, ErrUnknownScorer) {
		t.Fatalf("unknown scorer: err = %v", err)
	}
}

func TestNoPlacementErrorMessage(t *testing.T) {
	e := &NoPlacementError{Err: ErrNoCapacity, Reasons: map[string]int{"CPUFit": 3, "Ready": 1}, Placed: 2}
	want := "schedule: no capacity (placed 2; rejected by CPUFit: 3, Ready: 1)"
	if e.Error() != want {
		t.Fatalf("got %q, want %q", e.Error(), want)
	}
}
