package scheduler

import (
	"errors"
	"testing"
)

func TestNodeLabelHardAntiAffinity(t *testing.T) {
	in := func(id int, rack string) Node {
		return with(bigNode(id), func(n *Node) { n.Labels = map[string]string{"rack": rack} })
	}
	spread := Request{Policy: Policy{NodeLabelHardAntiAffinities: map[string]string{"rack": ""}}}
	runFilterCases(t, NodeLabelHardAntiAffinity{}, []filterCase{
		{name: "no rule", node: in(1, "a"), placed: []Node{in(2, "a")}},
		{name: "first VM", node: in(1, "a"), req: spread},
		{name: "value taken by a placed VM", node: in(1, "a"), req: spread, placed: []Node{in(2, "a")}, want: "LABEL_SPREAD"},
		{name: "other value", node: in(1, "a"), req: spread, placed: []Node{in(2, "b")}},
		{name: "value taken by a running replica", node: in(1, "a"), req: spread, group: []Node{in(3, "a")}, want: "LABEL_SPREAD"},
		{name: "node without the label", node: bigNode(1), req: spread, want: "NO_SPREAD_LABEL"},
		// The old meaning (never on a node carrying rack=a) is NodeLabelExclusion's now.
		{name: "carrying the pair is no rejection", node: in(1, "a"),
			req: Request{Policy: Policy{NodeLabelHardAntiAffinities: map[string]string{"rack": "a"}}}},
	})
}

func TestNodeLabelSoftAntiAffinity(t *testing.T) {
	in := func(id int, rack string) Node {
		return with(bigNode(id), func(n *Node) { n.Labels = map[string]string{"rack": rack} })
	}
	soft := Request{Flavor: smallFlavor(), Policy: Policy{NodeLabelSoftAntiAffinities: map[string]string{"rack": ""}}}
	tests := []struct {
		name          string
		node          Node
		req           Request
		placed, group []Node
		want          float64
	}{
		{"no preference", in(1, "a"), Request{Flavor: smallFlavor()}, nil, nil, 0},
		{"empty group", in(1, "a"), soft, nil, nil, 100},
		{"value holds every VM", in(1, "a"), soft, []Node{in(2, "a")}, nil, 0},
		{"value holds half", in(1, "a"), soft, []Node{in(2, "a")}, []Node{in(3, "b")}, 50},
		{"unused value", in(1, "c"), soft, []Node{in(2, "a")}, []Node{in(3, "b")}, 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := scoreOf(NodeLabelSoftAntiAffinity{}, tc.node, tc.req, tc.placed, tc.group); got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestScheduleLabelSpread: hard anti-affinity puts each VM on a different value of the
// key and fails when there are too few values; soft spreads as evenly as it can.
func TestScheduleLabelSpread(t *testing.T) {
	// Nodes 1..6 in racks a, a, b, b, c, c.
	mk := func() *Snapshot {
		s := fleet(6)
		for i := range s.Nodes {
			s.Nodes[i].Labels = map[string]string{"rack": string(rune('a' + i/2))}
		}
		return s
	}
	rackOf := func(s *Snapshot, id int) string {
		for _, n := range s.Nodes {
			if n.ID == id {
				return n.Labels["rack"]
			}
		}
		return ""
	}
	t.Run("hard: three VMs, three racks", func(t *testing.T) {
		s := mk()
		d, err := Schedule(s, Request{Flavor: smallFlavor(), Count: 3,
			Policy: Policy{NodeLabelHardAntiAffinities: map[string]string{"rack": ""}}}, DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, p := range d.Placements {
			r := rackOf(s, p.NodeID)
			if seen[r] {
				t.Fatalf("two VMs in rack %s: %+v", r, d.Placements)
			}
			seen[r] = true
		}
	})
	t.Run("hard: four VMs, three racks", func(t *testing.T) {
		_, err := Schedule(mk(), Request{Flavor: smallFlavor(), Count: 4,
			Policy: Policy{NodeLabelHardAntiAffinities: map[string]string{"rack": ""}}}, DefaultConfig())
		var npe *NoPlacementError
		if !errors.As(err, &npe) || !errors.Is(err, ErrNoCapacity) {
			t.Fatalf("want NoPlacementError, got %v", err)
		}
		if npe.Placed != 3 || npe.Reasons["NodeLabelHardAntiAffinity"] != 6 {
			t.Fatalf("placed %d, reasons %v", npe.Placed, npe.Reasons)
		}
	})
	t.Run("soft: six VMs, two per rack", func(t *testing.T) {
		s := mk()
		// Rack a's nodes are emptier: LeastAllocated alone would put more there.
		for i := 2; i < 6; i++ {
			s.Nodes[i].CPUAllocated = 20
		}
		d, err := Schedule(s, Request{Flavor: smallFlavor(), Count: 6,
			Policy: Policy{NodeLabelSoftAntiAffinities: map[string]string{"rack": ""}}}, DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		per := map[string]int{}
		for _, p := range d.Placements {
			per[rackOf(s, p.NodeID)]++
		}
		if per["a"] != 2 || per["b"] != 2 || per["c"] != 2 {
			t.Fatalf("VMs per rack %v, want 2 each", per)
		}
	})
}

func TestLifecycle(t *testing.T) {
	state := func(l Code) Node { return with(bigNode(1), func(n *Node) { n.Lifecycle = l }) }
	runFilterCases(t, Lifecycle{}, []filterCase{
		{name: "in service", node: bigNode(1)},
		{name: "closed region", node: state(LifecycleRegionClosed), want: LifecycleRegionClosed},
		{name: "retired host", node: state(LifecycleHostRetired), want: LifecycleHostRetired},
		{name: "host in maintenance", node: state(LifecycleHostMaintenance), want: LifecycleHostMaintenance},
		{name: "decommissioning rack", node: state(LifecycleRackDecommissioning), want: LifecycleRackDecommissioning},
		{name: "anything else", node: state("MOTHBALLED"), want: "NOT_IN_SERVICE"},
	})
}

func TestAvailabilityZoneFilter(t *testing.T) {
	in := func(az string) Request { return Request{AvailabilityZone: az} }
	runFilterCases(t, AvailabilityZone{}, []filterCase{
		{name: "no choice", node: bigNode(1)},
		{name: "chosen AZ", node: bigNode(1), req: in("az1")},
		{name: "other AZ", node: bigNode(1), req: in("az2"), want: "OTHER_AVAILABILITY_ZONE"},
	})
}
