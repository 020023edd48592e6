package scheduler

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// TestScheduleScaleUp: the group's running VMs (Request.GroupNodeIDs) count for zone
// rules and AZ spreading exactly like VMs placed earlier in the request.
func TestScheduleScaleUp(t *testing.T) {
	// Nodes 1..8: racks r1..r4 (two nodes each), power zones p1 (nodes 1-4) and p2
	// (5-8), AZs az1 (odd) and az2 (even).
	mk := func() *Snapshot {
		s := fleet(8)
		for i := range s.Nodes {
			s.Nodes[i].RackZone = "r" + itoa(1+i/2)
			s.Nodes[i].PowerZone = "p" + itoa(1+i/4)
		}
		return s
	}
	rack := ZoneRule{Kind: ZoneRack, Mode: ZoneAntiAffinity}
	power := ZoneRule{Kind: ZonePower, Mode: ZoneAffinity}
	tests := []struct {
		name     string
		existing []int
		count    int
		rules    []ZoneRule
		mod      func(*Snapshot)
		// allowed lists where new VMs may go (nil: anywhere); err is the expected error.
		allowed []int
		err     error
	}{
		{name: "rack anti-affinity avoids the racks of running members", existing: []int{1, 4}, count: 2,
			rules: []ZoneRule{rack}, allowed: []int{5, 6, 7, 8}},
		{name: "rack anti-affinity: one rack left", existing: []int{1, 3, 5}, count: 1,
			rules: []ZoneRule{rack}, allowed: []int{7, 8}},
		{name: "rack anti-affinity: no rack left", existing: []int{1, 3, 5, 8}, count: 1,
			rules: []ZoneRule{rack}, err: ErrNoCapacity},
		{name: "rack anti-affinity: one rack for two VMs", existing: []int{1, 3, 5}, count: 2,
			rules: []ZoneRule{rack}, err: ErrNoCapacity},
		{name: "affinity follows the running members' zone", existing: []int{6}, count: 3,
			rules:   []ZoneRule{power},
			mod:     func(s *Snapshot) { s.Nodes[4].CPUAllocated, s.Nodes[5].CPUAllocated = 20, 20 }, // p2 fuller: spread would prefer p1
			allowed: []int{5, 6, 7, 8}},
		{name: "affinity and rack anti-affinity together", existing: []int{6}, count: 1,
			rules: []ZoneRule{power, rack}, allowed: []int{7, 8}},
		{name: "affinity and rack anti-affinity: zone full", existing: []int{6, 7}, count: 1,
			rules: []ZoneRule{power, rack}, err: ErrNoCapacity},
		{name: "unknown IDs are ignored", existing: []int{404}, count: 4, rules: []ZoneRule{rack}},
		{name: "without members", count: 4, rules: []ZoneRule{rack}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := mk()
			if tc.mod != nil {
				tc.mod(s)
			}
			r := Request{Flavor: smallFlavor(), Count: tc.count, GroupNodeIDs: tc.existing, Policy: Policy{Zones: tc.rules}}
			d, err := Schedule(s, r, DefaultConfig())
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if err != nil {
				return
			}
			racks, powers := map[string]int{}, map[string]bool{}
			for _, id := range tc.existing {
				if id <= len(s.Nodes) {
					racks[s.Nodes[id-1].RackZone]++
					powers[s.Nodes[id-1].PowerZone] = true
				}
			}
			for _, id := range placedOn(d) {
				if tc.allowed != nil && !containsInt(tc.allowed, id) {
					t.Fatalf("placed on %v, want within %v", placedOn(d), tc.allowed)
				}
				n := s.Nodes[id-1]
				racks[n.RackZone]++
				powers[n.PowerZone] = true
			}
			for _, rule := range tc.rules {
				switch {
				case rule.Kind == ZoneRack && rule.Mode == ZoneAntiAffinity:
					for rk, n := range racks {
						if n > 1 {
							t.Fatalf("rack %s holds %d VMs of the group (placed on %v)", rk, n, placedOn(d))
						}
					}
				case rule.Kind == ZonePower && rule.Mode == ZoneAffinity && len(powers) != 1:
					t.Fatalf("group spans power zones %v (placed on %v)", powers, placedOn(d))
				}
			}
		})
	}
}

func containsInt(list []int, x int) bool {
	for _, y := range list {
		if y == x {
			return true
		}
	}
	return false
}

// TestScheduleScaleUpSpreadsAZ: running members weigh on SpreadAZ like placed ones.
func TestScheduleScaleUpSpreadsAZ(t *testing.T) {
	s := fleet(4) // nodes 1, 3 in az2; 2, 4 in az1
	one := Request{Flavor: smallFlavor()}
	d, err := Schedule(s, one, DefaultConfig())
	if err != nil || placedOn(d)[0] != 1 {
		t.Fatalf("without members: placed on %v (%v), want 1 (az2, lowest ID of the tie)", placedOn(d), err)
	}
	one.GroupNodeIDs = []int{1, 3} // two members running in az2
	d, err = Schedule(s, one, DefaultConfig())
	if err != nil || s.Nodes[placedOn(d)[0]-1].AvailabilityZone != "az1" {
		t.Fatalf("with members in az2: placed on %v (%v), want az1", placedOn(d), err)
	}
	if az2, az1 := d.Nodes[0].Scores["SpreadAZ"], d.Nodes[1].Scores["SpreadAZ"]; az2 != 50 || az1 != 100 {
		t.Fatalf("SpreadAZ az2 %v, az1 %v; want 50 and 100", az2, az1)
	}
}

// TestSnapshotApply: applying each decision keeps the snapshot as the committer would,
// so the next decision sees it.
func TestSnapshotApply(t *testing.T) {
	s := fleet(2)
	s.Quotas = map[QuotaKey]Quota{{TenantID: 5, HostGroupID: 0}: {VCPUs: 100}}
	r := Request{TenantID: 5, Flavor: Flavor{VCPUs: 4, MemoryMB: 1024, DiskGB: 10, Dedicated: true}, Count: 3}
	d, err := Schedule(s, r, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(r, d); err != nil {
		t.Fatal(err)
	}
	cpu, ded := 0, 0
	for _, n := range s.Nodes {
		cpu += n.CPUAllocated
		ded += 8 - n.DedicatedCoresFree
	}
	if cpu != 12 || ded != 12 || s.Quotas[QuotaKey{TenantID: 5}].UsedVCPUs != 12 {
		t.Fatalf("after apply: %d cores, %d dedicated, quota %+v; want 12, 12, 12 used", cpu, ded, s.Quotas[QuotaKey{TenantID: 5}])
	}
	// Dedicated cores are now short: 8 per node, 12 taken, room for one more VM of 4.
	if _, err := Schedule(s, Request{TenantID: 5, Flavor: r.Flavor, Count: 2}, DefaultConfig()); !errors.Is(err, ErrNoCapacity) {
		t.Fatalf("err = %v, want no capacity after apply", err)
	}
	before := *s
	before.Nodes = append([]Node(nil), s.Nodes...)
	if err := s.Apply(r, Decision{Placements: []Placement{{NodeID: 1}, {NodeID: 99}}}); err == nil || !reflect.DeepEqual(before.Nodes, s.Nodes) {
		t.Fatalf("apply with an unknown node: err %v, nodes changed %v", err, !reflect.DeepEqual(before.Nodes, s.Nodes))
	}
}

// TestScheduleSampling: with ScoreSampleRatio a round stops looking once enough nodes
// were found feasible; the rest are explained as skipped, and the outcome is still
// deterministic.
func TestScheduleSampling(t *testing.T) {
	s := fleet(2000)
	cfg := DefaultConfig()
	cfg.ScoreSampleRatio = 0.1
	// The ratio alone: DefaultConfig's MaxNodesToScore (100) would cap the sample below
	// the 10% of 2,000 this test expects.
	cfg.MaxNodesToScore = 0
	r := Request{Flavor: smallFlavor(), Count: 3, Policy: Policy{Zones: []ZoneRule{{Kind: ZoneRack, Mode: ZoneAntiAffinity}}}}
	d, err := Schedule(s, r, cfg)
	if err != nil {
		t.Fatal(err)
	}
	scored, skipped := 0, 0
	for _, n := range d.Nodes {
		switch {
		case n.Skipped:
			skipped++
			if n.Scores != nil || n.Rejected != "" {
				t.Fatalf("skipped node explained as %+v", n)
			}
		case n.Rejected == "":
			scored++
		}
	}
	if scored < 200 || scored > 200+chunk || skipped == 0 {
		t.Fatalf("%d scored, %d skipped; want about 10%% of 2000 scored", scored, skipped)
	}
	again, _ := Schedule(s, r, cfg)
	if !reflect.DeepEqual(placedOn(again), placedOn(d)) {
		t.Fatalf("sampled decisions differ: %v, %v", placedOn(d), placedOn(again))
	}
	// Sampling still finds the only feasible node, wherever it is.
	for i := range s.Nodes {
		s.Nodes[i].Ready = i == 1234
	}
	d, err = Schedule(s, Request{Flavor: smallFlavor()}, cfg)
	if err != nil || placedOn(d)[0] != 1235 {
		t.Fatalf("placed on %v (%v), want the only ready node 1235", placedOn(d), err)
	}
}

// TestCompactExplanation: CompactExplain records the same explanation without a map per
// node; its accessors agree with Decision.Nodes.
func TestCompactExplanation(t *testing.T) {
	s := fleet(5)
	s.Nodes[0].Ready = false
	s.Nodes[3].CPUAllocated = 31
	r := Request{Flavor: smallFlavor(), Count: 2}
	full, err := Schedule(s, r, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.CompactExplain = true
	d, err := Schedule(s, r, cfg)
	if err != nil || d.Nodes != nil || d.Explanation == nil {
		t.Fatalf("compact decision %+v (%v), want an Explanation and no Nodes", d, err)
	}
	e := d.Explanation
	if !reflect.DeepEqual(e.Nodes(), full.Nodes) || e.Len() != 5 {
		t.Fatalf("compact explanation %+v, want %+v", e.Nodes(), full.Nodes)
	}
	if f, st, ok := e.Rejected(0); !ok || f != "Ready" || st.Code != "NOT_READY" {
		t.Fatalf("node 1: %q %+v %v, want rejected by Ready", f, st, ok)
	}
	if f, st, ok := e.Rejected(3); !ok || f != "CPUFit" || st.Code != "INSUFFICIENT_CPU" {
		t.Fatalf("node 4: %q %+v %v, want rejected by CPUFit", f, st, ok)
	}
	for j, name := range e.Scorers {
		if e.Score(1, j) != full.Nodes[1].Scores[name] {
			t.Fatalf("score %s of node 2: %v, want %v", name, e.Score(1, j), full.Nodes[1].Scores[name])
		}
	}
	if e.Total(1) != full.Nodes[1].Total || e.NodeID(4) != 5 || e.Skipped(1) {
		t.Fatal("compact accessors disagree with Nodes")
	}
	cfg.Quiet = true
	if q, _ := Schedule(s, r, cfg); q.Explanation != nil || q.Nodes != nil {
		t.Fatal("quiet decision explained")
	}
}

// TestNoPlacementExplanation: when nothing fits, the error explains every node.
func TestNoPlacementExplanation(t *testing.T) {
	s := fleet(3)
	s.Nodes[0].Ready = false
	s.Nodes[1].CPUAllocated = 32
	s.Nodes[2].CPUCapacity = 2 // room for one VM
	_, err := Schedule(s, Request{Flavor: smallFlavor(), Count: 2}, DefaultConfig())
	var npe *NoPlacementError
	if !errors.As(err, &npe) || npe.Explanation == nil || npe.Placed != 1 {
		t.Fatalf("err = %v, want a NoPlacementError with an explanation after 1 placed", err)
	}
	want := []string{"Ready", "CPUFit", "CPUFit"} // node 3 took the first VM and is full now
	for i, w := range want {
		if f, _, ok := npe.Explanation.Rejected(i); !ok || f != w {
			t.Fatalf("node %d: rejected by %q (%v), want %s", npe.Explanation.NodeID(i), f, ok, w)
		}
	}
	cfg := DefaultConfig()
	cfg.Quiet = true
	if _, err := Schedule(s, Request{Flavor: smallFlavor(), Count: 2}, cfg); !errors.As(err, &npe) || npe.Explanation != nil {
		t.Fatalf("quiet: err = %v, want no explanation", err)
	}
}

// TestScheduleSeesSnapshotChanges: allocations, Ready and Schedulable are read by every
// decision; static attributes after Invalidate or when Nodes is replaced.
func TestScheduleSeesSnapshotChanges(t *testing.T) {
	s := fleet(3)
	r := Request{Flavor: smallFlavor(), Policy: Policy{NodeLabelHardAffinities: map[string]string{"ssd": "yes"}}}
	if _, err := Schedule(s, r, DefaultConfig()); !errors.Is(err, ErrNoCapacity) {
		t.Fatalf("err = %v, want no capacity: no ssd node", err)
	}
	s.Nodes[2].Labels = map[string]string{"ssd": "yes"}
	s.Invalidate()
	if d, err := Schedule(s, r, DefaultConfig()); err != nil || placedOn(d)[0] != 3 {
		t.Fatalf("placed on %v (%v), want 3 after Invalidate", placedOn(d), err)
	}
	s.Nodes[2].Schedulable = false
	if _, err := Schedule(s, r, DefaultConfig()); !errors.Is(err, ErrNoCapacity) {
		t.Fatalf("err = %v, want no capacity: the ssd node is cordoned", err)
	}
	n := bigNode(4)
	n.Labels = map[string]string{"ssd": "yes"}
	s.Nodes = append(s.Nodes, n)
	if d, err := Schedule(s, r, DefaultConfig()); err != nil || placedOn(d)[0] != 4 {
		t.Fatalf("placed on %v (%v), want the new node 4", placedOn(d), err)
	}
}

// TestScheduleConcurrent: decisions on one snapshot may run concurrently (the index is
// built once, buffers are per decision).
func TestScheduleConcurrent(t *testing.T) {
	s := fleet(300)
	r := Request{Flavor: smallFlavor(), Count: 4, GroupNodeIDs: []int{7},
		Policy: Policy{Zones: []ZoneRule{{Kind: ZoneRack, Mode: ZoneAntiAffinity}}, NodeLabelSoftAffinities: map[string]string{"a": "b"}}}
	want, err := Schedule(&Snapshot{Clusters: s.Clusters, Nodes: s.Nodes}, r, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan Decision)
	for range 4 {
		go func() {
			d, _ := Schedule(s, r, DefaultConfig())
			done <- d
		}()
	}
	for range 4 {
		if d := <-done; !reflect.DeepEqual(d.Nodes, want.Nodes) || !reflect.DeepEqual(d.Placements, want.Placements) {
			t.Fatal("concurrent decisions differ")
		}
	}
}

// TestIncrementalRounds: rounds 2..Count of a group reuse stable verdicts and scores
// and re-evaluate zone rules only near the VM just placed; every decision must be the
// one full rounds give, explanation included.
func TestIncrementalRounds(t *testing.T) {
	s := fleet(60)
	for i := range s.Nodes {
		n := &s.Nodes[i]
		n.RackZone, n.PowerZone, n.NetworkZone = "r"+itoa(i/4), "p"+itoa(i/12), "n"+itoa(i%5)
		n.AvailabilityZone, n.HostGroupID = "az"+itoa(i%3), i%2
		n.CPUAllocated = (i * 7) % 30
		n.Ready = i%17 != 0
		if i%3 == 0 {
			n.Labels = map[string]string{"ssd": "yes"}
		}
	}
	s.Quotas = map[QuotaKey]Quota{{TenantID: 1, HostGroupID: 0}: {VCPUs: 16}}
	anti := func(kinds ...string) []ZoneRule {
		var out []ZoneRule
		for _, k := range kinds {
			out = append(out, ZoneRule{Kind: k, Mode: ZoneAntiAffinity})
		}
		return out
	}
	requests := map[string]Request{
		"anti-affinity on three kinds": {Count: 5, Policy: Policy{Zones: anti(ZoneRack, ZonePower, ZoneNetwork)}},
		"quota fills up":               {TenantID: 1, Count: 12},
		"follow the first VM's power":  {Count: 6, Policy: Policy{Zones: []ZoneRule{{Kind: ZonePower, Mode: ZoneAffinity}}}},
		"labels and running members": {Count: 4, GroupNodeIDs: []int{3, 9},
			Policy: Policy{Zones: anti(ZoneRack), NodeLabelSoftAffinities: map[string]string{"ssd": "yes"},
				NodeLabelHardAntiAffinities: map[string]string{"gpu": "yes"}}},
		"more than fits":               {Count: 30, AllowPartial: true, Policy: Policy{Zones: anti(ZoneRack)}},
		"nothing fits after a few VMs": {Count: 30, Policy: Policy{Zones: anti(ZoneRack)}},
	}
	for name, r := range requests {
		t.Run(name, func(t *testing.T) {
			r.Flavor = Flavor{VCPUs: 4, MemoryMB: 4096, DiskGB: 10}
			d, err := Schedule(s, r, DefaultConfig())
			testNoIncremental = true
			full, fullErr := Schedule(s, r, DefaultConfig())
			testNoIncremental = false
			if fmt.Sprint(err) != fmt.Sprint(fullErr) {
				t.Fatalf("error %v, with full rounds %v", err, fullErr)
			}
			d.Explanation, full.Explanation = nil, nil
			if !reflect.DeepEqual(d, full) {
				t.Fatalf("decision %+v\nwith full rounds %+v", d, full)
			}
		})
	}
}
