package fieldtype

import "fmt"

// Failure domains known to placement, the values of ZoneRule.Kind.
const (
	ZonePower   = "POWER"
	ZoneRack    = "RACK"
	ZoneNetwork = "NETWORK"
)

// Zone rule modes, the values of ZoneRule.Mode (seed 004: AffinityPowerZone, AntiAffinityPowerZone, ...).
const (
	ZoneAffinity     = "AFFINITY"
	ZoneAntiAffinity = "ANTI_AFFINITY"
)

// ZoneRule is one zone policy, e.g. {kind: POWER, mode: ANTI_AFFINITY}, or an affinity
// pinned to a named zone.
type ZoneRule struct {
	Kind string `json:"kind"`
	Mode string `json:"mode"`
	Zone string `json:"zone,omitempty"`
}

// SchedulePolicy is how a VM or a region service's VMs are placed (SPEC.md §4): which
// clusters and nodes qualify, hard and soft label (anti-)affinities, and zone rules.
type SchedulePolicy struct {
	ClusterNames                []string   `json:"clusterNames,omitempty"`
	ClusterLabels               Labels     `json:"clusterLabels,omitempty"`
	NodeNames                   []string   `json:"nodeNames,omitempty"`
	NodeLabelHardAffinities     Labels     `json:"nodeLabelHardAffinities,omitempty"`
	NodeLabelHardAntiAffinities Labels     `json:"nodeLabelHardAntiAffinities,omitempty"`
	NodeLabelSoftAffinities     Labels     `json:"nodeLabelSoftAffinities,omitempty"`
	NodeLabelSoftAntiAffinities Labels     `json:"nodeLabelSoftAntiAffinities,omitempty"`
	Zones                       []ZoneRule `json:"zones,omitempty"`
}

// Validate reports the first rule that makes no sense.
func (p SchedulePolicy) Validate() error {
	for _, l := range []Labels{p.ClusterLabels, p.NodeLabelHardAffinities, p.NodeLabelHardAntiAffinities,
		p.NodeLabelSoftAffinities, p.NodeLabelSoftAntiAffinities} {
		if err := l.Validate(); err != nil {
			return err
		}
	}
	seen := map[string]bool{}
	for i, z := range p.Zones {
		switch z.Kind {
		case ZonePower, ZoneRack, ZoneNetwork:
		default:
			return fmt.Errorf("zone rule %d: kind %q is not one of POWER, RACK, NETWORK", i, z.Kind)
		}
		switch z.Mode {
		case ZoneAffinity:
		case ZoneAntiAffinity:
			if z.Zone != "" {
				return fmt.Errorf("zone rule %d: an anti-affinity rule cannot name a zone", i)
			}
		default:
			return fmt.Errorf("zone rule %d: mode %q is not one of AFFINITY, ANTI_AFFINITY", i, z.Mode)
		}
		if seen[z.Kind] {
			return fmt.Errorf("zone rule %d: more than one rule for %s zones", i, z.Kind)
		}
		seen[z.Kind] = true
	}
	return nil
}
