package fieldtype

import (
	"encoding/json"
	"fmt"
)

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
// clusters and nodes qualify, hard and soft label affinities, label anti-affinities, label
// exclusions, and zone rules.
//
// The anti-affinity maps spread a group's VMs over the values of each key (a topology key,
// as in Kubernetes' pod anti-affinity; seed 001's 必ず分散 / できるだけ分散): hard puts each
// VM on a node with a different value of the key (placement fails when there are fewer
// values than VMs), soft spreads as evenly as it can. Their values are not used. The
// exclusion maps are "never (hard) / rather not (soft) on nodes carrying key=value".
type SchedulePolicy struct {
	ClusterNames                []string   `json:"clusterNames,omitempty"`
	ClusterLabels               Labels     `json:"clusterLabels,omitempty"`
	NodeNames                   []string   `json:"nodeNames,omitempty"`
	NodeLabelHardAffinities     Labels     `json:"nodeLabelHardAffinities,omitempty"`
	NodeLabelHardAntiAffinities Labels     `json:"nodeLabelHardAntiAffinities,omitempty"`
	NodeLabelSoftAffinities     Labels     `json:"nodeLabelSoftAffinities,omitempty"`
	NodeLabelSoftAntiAffinities Labels     `json:"nodeLabelSoftAntiAffinities,omitempty"`
	NodeLabelHardExclusions     Labels     `json:"nodeLabelHardExclusions,omitempty"`
	NodeLabelSoftExclusions     Labels     `json:"nodeLabelSoftExclusions,omitempty"`
	Zones                       []ZoneRule `json:"zones,omitempty"`
}

// PolicyVersion is the version of the stored form of SchedulePolicy. Version 1 (stored
// without a version) meant by the anti-affinity maps what the exclusion maps mean now;
// reading such a policy moves them there (see UnmarshalJSON), and every policy written is
// stored as this version.
const PolicyVersion = 2

// storedPolicy is SchedulePolicy as stored, with its version.
type storedPolicy struct {
	Version int `json:"version"`
	policyFields
}

// policyFields has SchedulePolicy's fields without its methods (no recursion).
type policyFields SchedulePolicy

// MarshalJSON stores the policy with its version.
func (p SchedulePolicy) MarshalJSON() ([]byte, error) {
	return json.Marshal(storedPolicy{Version: PolicyVersion, policyFields: policyFields(p)})
}

// UnmarshalJSON reads a stored policy, migrating one stored before label anti-affinity
// meant spreading: its anti-affinity maps become exclusions.
func (p *SchedulePolicy) UnmarshalJSON(b []byte) error {
	var sp storedPolicy
	if err := json.Unmarshal(b, &sp); err != nil {
		return err
	}
	if sp.Version < PolicyVersion {
		sp.NodeLabelHardExclusions = merge(sp.NodeLabelHardExclusions, sp.NodeLabelHardAntiAffinities)
		sp.NodeLabelSoftExclusions = merge(sp.NodeLabelSoftExclusions, sp.NodeLabelSoftAntiAffinities)
		sp.NodeLabelHardAntiAffinities, sp.NodeLabelSoftAntiAffinities = nil, nil
	}
	*p = SchedulePolicy(sp.policyFields)
	return nil
}

// merge adds b's pairs to a.
func merge(a, b Labels) Labels {
	if len(b) == 0 {
		return a
	}
	if a == nil {
		a = Labels{}
	}
	for k, v := range b {
		a[k] = v
	}
	return a
}

// Validate reports the first rule that makes no sense.
func (p SchedulePolicy) Validate() error {
	for _, l := range []Labels{p.ClusterLabels, p.NodeLabelHardAffinities, p.NodeLabelHardAntiAffinities,
		p.NodeLabelSoftAffinities, p.NodeLabelSoftAntiAffinities, p.NodeLabelHardExclusions, p.NodeLabelSoftExclusions} {
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
