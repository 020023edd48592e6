package scheduler

// ZonePolicy applies the policy's zone rules, per zone kind (POWER, RACK, NETWORK):
// AFFINITY keeps the group in the named zone, or else in the zone of its first VM;
// ANTI_AFFINITY puts no two VMs of the group in the same zone. A node with no zone of a
// ruled kind is rejected.
type ZonePolicy struct{}

var _ Filter = (*ZonePolicy)(nil)

// Name implements Filter.
func (ZonePolicy) Name() string { return "ZonePolicy" }

// Filter implements Filter.
func (ZonePolicy) Filter(st *State, n *NodeView) Status {
	for _, rule := range st.Request.Policy.Zones {
		zone := zoneOf(n.Node, rule.Kind)
		if zone == "" {
			return Reject("NO_ZONE", "node has no zone of a ruled kind")
		}
		switch rule.Mode {
		case ZoneAffinity:
			want := rule.Zone
			if want == "" && len(st.placed) > 0 {
				want = zoneOf(st.placed[0].Node, rule.Kind)
			}
			if want != "" && zone != want {
				return Reject("ZONE_AFFINITY", "node is outside the group's zone")
			}
		case ZoneAntiAffinity:
			for _, p := range st.placed {
				if zoneOf(p.Node, rule.Kind) == zone {
					return Reject("ZONE_ANTI_AFFINITY", "zone already holds a VM of the group")
				}
			}
		default:
			return Reject("BAD_ZONE_RULE", "unknown zone rule mode")
		}
	}
	return Pass
}

// zoneOf returns the node's zone of a kind, or "" for an unknown kind.
func zoneOf(n *Node, kind string) string {
	switch kind {
	case ZonePower:
		return n.PowerZone
	case ZoneRack:
		return n.RackZone
	case ZoneNetwork:
		return n.NetworkZone
	}
	return ""
}
