package scheduler

import "testing"

func TestZonePolicy(t *testing.T) {
	at := func(id int, power, rack, network string) Node {
		return with(bigNode(id), func(n *Node) { n.PowerZone, n.RackZone, n.NetworkZone = power, rack, network })
	}
	rules := func(z ...ZoneRule) Request { return Request{Policy: Policy{Zones: z}} }
	anti := func(kind string) ZoneRule { return ZoneRule{Kind: kind, Mode: ZoneAntiAffinity} }
	aff := func(kind, zone string) ZoneRule { return ZoneRule{Kind: kind, Mode: ZoneAffinity, Zone: zone} }
	runFilterCases(t, ZonePolicy{}, []filterCase{
		{name: "no rules", node: at(1, "p1", "r1", "n1"), placed: []Node{at(2, "p1", "r1", "n1")}},
		{name: "anti rack, first VM", node: at(1, "p1", "r1", "n1"), req: rules(anti(ZoneRack))},
		{name: "anti rack, same rack taken", node: at(1, "p1", "r1", "n1"), req: rules(anti(ZoneRack)),
			placed: []Node{at(2, "p2", "r1", "n2")}, want: "ZONE_ANTI_AFFINITY"},
		{name: "anti rack, other rack", node: at(1, "p1", "r1", "n1"), req: rules(anti(ZoneRack)),
			placed: []Node{at(2, "p1", "r2", "n1")}},
		{name: "anti power and network, network clashes", node: at(1, "p1", "r1", "n1"),
			req: rules(anti(ZonePower), anti(ZoneNetwork)), placed: []Node{at(2, "p2", "r1", "n1")}, want: "ZONE_ANTI_AFFINITY"},
		{name: "affinity named zone", node: at(1, "p1", "r1", "n1"), req: rules(aff(ZonePower, "p1"))},
		{name: "affinity other named zone", node: at(1, "p1", "r1", "n1"), req: rules(aff(ZonePower, "p9")), want: "ZONE_AFFINITY"},
		{name: "affinity follows first VM", node: at(1, "p1", "r1", "n1"), req: rules(aff(ZoneNetwork, "")),
			placed: []Node{at(2, "p2", "r2", "n1")}},
		{name: "affinity away from first VM", node: at(1, "p1", "r1", "n1"), req: rules(aff(ZoneNetwork, "")),
			placed: []Node{at(2, "p1", "r1", "n2")}, want: "ZONE_AFFINITY"},
		{name: "node without zone", node: at(1, "", "r1", "n1"), req: rules(anti(ZonePower)), want: "NO_ZONE"},
		{name: "unknown kind", node: at(1, "p1", "r1", "n1"), req: rules(anti("MOON")), want: "NO_ZONE"},
		{name: "unknown mode", node: at(1, "p1", "r1", "n1"), req: rules(ZoneRule{Kind: ZoneRack, Mode: "SIDEWAYS"}), want: "BAD_ZONE_RULE"},
		{name: "affinity to a zone nobody has", node: at(1, "p1", "r1", "n1"), req: rules(aff(ZoneRack, "r404")), want: "ZONE_AFFINITY"},

		// Running members of the group (Request.GroupNodeIDs) count like placed ones.
		{name: "anti rack, running member's rack", node: at(1, "p1", "r1", "n1"), req: rules(anti(ZoneRack)),
			group: []Node{at(3, "p2", "r1", "n2")}, want: "ZONE_ANTI_AFFINITY"},
		{name: "anti rack, running member elsewhere", node: at(1, "p1", "r1", "n1"), req: rules(anti(ZoneRack)),
			group: []Node{at(3, "p1", "r2", "n1")}},
		{name: "anti network, running and placed members", node: at(1, "p1", "r1", "n1"), req: rules(anti(ZoneNetwork)),
			group: []Node{at(3, "p1", "r2", "n2")}, placed: []Node{at(2, "p1", "r3", "n1")}, want: "ZONE_ANTI_AFFINITY"},
		{name: "affinity follows the running member", node: at(1, "p1", "r1", "n1"), req: rules(aff(ZonePower, "")),
			group: []Node{at(3, "p1", "r7", "n7")}},
		{name: "affinity away from the running member", node: at(1, "p1", "r1", "n1"), req: rules(aff(ZonePower, "")),
			group: []Node{at(3, "p2", "r7", "n7")}, want: "ZONE_AFFINITY"},
		{name: "running member comes before placed ones", node: at(1, "p1", "r1", "n1"), req: rules(aff(ZonePower, "")),
			group: []Node{at(3, "p1", "r7", "n7")}, placed: []Node{at(2, "p2", "r2", "n2")}},
	})
}
