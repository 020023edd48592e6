package placement

import (
	"context"
	"fmt"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/scheduler"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/flavor"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
)

// Request is what to place: Count VMs of one flavor for a tenant in a region, as a group
// under one policy.
type Request struct {
	TenantID, RegionID int
	Flavor             *ent.Flavor // with its provider edge loaded, if any
	Count              int
	Policy             fieldtype.SchedulePolicy
	AllowPartial       bool
	// GroupNodeIDs are the nodes of the group's VMs that already run (a region service's
	// replicas), once per VM: zone rules and spreading count them.
	GroupNodeIDs []int
	// AvailabilityZone, when set, is the name of the zone the group must stay in.
	AvailabilityZone string
	// Move says the VMs exist already and only change node (Placer.Move): the tenant's
	// quota is neither checked nor able to refuse; what the VM held is given back after.
	Move bool
}

// scheduler turns the request into the scheduler's.
func (r Request) scheduler() scheduler.Request {
	f := r.Flavor
	out := scheduler.Request{
		TenantID: r.TenantID,
		Region:   regionKey(r.RegionID),
		Flavor: scheduler.Flavor{VCPUs: f.Vcpus, MemoryMB: f.MemoryMB, DiskGB: f.DiskGB,
			Dedicated: f.CPUPolicy == flavor.CPUPolicyDedicated, Exclusive: exclusivity(f.Exclusive)},
		Count:            r.Count,
		Policy:           policy(r.Policy),
		AllowPartial:     r.AllowPartial,
		GroupNodeIDs:     r.GroupNodeIDs,
		AvailabilityZone: r.AvailabilityZone,
	}
	if p := f.Edges.Provider; p != nil {
		out.Provider = p.Name
	}
	return out
}

// policy converts a stored schedule policy to the scheduler's.
func policy(p fieldtype.SchedulePolicy) scheduler.Policy {
	out := scheduler.Policy{
		ClusterNames:                p.ClusterNames,
		ClusterLabels:               p.ClusterLabels,
		NodeNames:                   p.NodeNames,
		NodeLabelHardAffinities:     p.NodeLabelHardAffinities,
		NodeLabelHardAntiAffinities: p.NodeLabelHardAntiAffinities,
		NodeLabelSoftAffinities:     p.NodeLabelSoftAffinities,
		NodeLabelSoftAntiAffinities: p.NodeLabelSoftAntiAffinities,
		NodeLabelHardExclusions:     p.NodeLabelHardExclusions,
		NodeLabelSoftExclusions:     p.NodeLabelSoftExclusions,
	}
	for _, z := range p.Zones {
		out.Zones = append(out.Zones, scheduler.ZoneRule{Kind: z.Kind, Mode: z.Mode, Zone: z.Zone})
	}
	return out
}

// loadFlavor reads a flavor with its provider, whoever the viewer is (flavors are in the
// catalog; the provider edge is needed to match nodes).
func loadFlavor(ctx context.Context, c *ent.Client, id int, field string) (*ent.Flavor, error) {
	f, err := c.Flavor.Query().Where(flavor.ID(id)).WithProvider().Only(authz.Unrestricted(ctx))
	if ent.IsNotFound(err) {
		return nil, apierr.Validation(field, "flavor %d does not exist", id)
	}
	if err != nil {
		return nil, fmt.Errorf("load flavor %d: %w", id, err)
	}
	return f, nil
}

// exclusivity maps a flavor's exclusive field to the scheduler's.
func exclusivity(e flavor.Exclusive) scheduler.Exclusivity {
	switch e {
	case flavor.ExclusiveHost:
		return scheduler.ExclusiveHost
	case flavor.ExclusiveNumaNode:
		return scheduler.ExclusiveNUMANode
	}
	return scheduler.ExclusiveNone
}
