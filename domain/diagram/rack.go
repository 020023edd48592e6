package diagram

import (
	"cmp"
	"context"
	"slices"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/datacenter"
	"github.com/virtflow/virtflow/ent/floor"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/ent/maintainer"
	"github.com/virtflow/virtflow/ent/maintainergroup"
	"github.com/virtflow/virtflow/ent/networkzone"
	"github.com/virtflow/virtflow/ent/powerzone"
	"github.com/virtflow/virtflow/ent/rack"
	"github.com/virtflow/virtflow/ent/rackzone"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// Rack returns the elevation of rack id: every unit from the top down with the device on each
// face, and every mounted device with its node's state and allocation, VM count, open alerts
// and maintainers. It runs at most 12 SQL statements whatever the number of devices: the rack
// with its floor, datacenter and zones, the hosts with their nodes, maintainers and maintainer
// groups (ent eager loading, one statement per edge), then one grouped count each for VMs and
// open alerts. A rack that does not exist or that the viewer may not read is NOT_FOUND.
func Rack(ctx context.Context, c *ent.Client, id int) (*RackElevation, error) {
	rk, err := c.Rack.Query().
		Where(rack.ID(id)).
		Select(rack.FieldName, rack.FieldRow, rack.FieldPosition, rack.FieldHeight, rack.FieldStatus).
		WithFloor(func(q *ent.FloorQuery) {
			q.Select(floor.FieldName).WithDatacenter(func(q *ent.DatacenterQuery) { q.Select(datacenter.FieldName) })
		}).
		WithPowerZone(powerZoneName).
		WithNetworkZone(networkZoneName).
		WithRackZone(rackZoneName).
		WithHosts(func(q *ent.HostQuery) {
			// Only what the elevation shows: not the hardware inventory (JSON disks, GPUs, NICs).
			q.Where(host.PositionNotNil()).
				Select(host.FieldName, host.FieldKind, host.FieldRole, host.FieldModel, host.FieldPosition,
					host.FieldHeight, host.FieldFace, host.FieldFullDepth, host.FieldLifecycle).
				WithNode(func(q *ent.ComputeNodeQuery) {
					q.Select(computenode.FieldName, computenode.FieldStatus, computenode.FieldSchedulable,
						computenode.FieldCPUCapacity, computenode.FieldCPUAllocated,
						computenode.FieldMemoryCapacityMB, computenode.FieldMemoryAllocatedMB)
				}).
				WithMaintainers(func(q *ent.MaintainerQuery) { q.Select(maintainer.FieldName) }).
				WithMaintainerGroups(func(q *ent.MaintainerGroupQuery) { q.Select(maintainergroup.FieldName) })
		}).
		Only(ctx)
	if err != nil {
		return nil, lookupError(err, "rack", id)
	}

	hosts := rk.Edges.Hosts
	sortDevices(hosts)
	var hostIDs, nodeIDs []int
	nodeHost := map[int]int{}
	for _, h := range hosts {
		hostIDs = append(hostIDs, h.ID)
		if n := h.Edges.Node; n != nil {
			nodeIDs = append(nodeIDs, n.ID)
			nodeHost[n.ID] = h.ID
		}
	}
	vms, err := vmCounts(ctx, c, virtualmachine.NodeColumn, nodeIDs)
	if err != nil {
		return nil, err
	}
	alerts := map[int]AlertCounts{}
	if len(hosts) > 0 {
		if alerts, err = hostAlerts(ctx, c, alertsOf(hostIDs, nodeIDs), nodeHost); err != nil {
			return nil, err
		}
	}

	el := &RackElevation{Rack: rackSummary(rk, rk.Edges.Floor), Devices: make([]ElevationDevice, 0, len(hosts))}
	placements := make([]placement, len(hosts))
	for i, h := range hosts {
		placements[i] = placementOf(h)
		d := ElevationDevice{
			ID:          h.ID,
			Name:        h.Name,
			Kind:        h.Kind,
			Model:       h.Model,
			Position:    h.Position,
			Height:      h.Height,
			Face:        h.Face,
			FullDepth:   h.FullDepth,
			Lifecycle:   h.Lifecycle,
			Alerts:      alerts[h.ID],
			Maintainers: responsible(h.Edges.Maintainers, h.Edges.MaintainerGroups),
		}
		if h.Role != nil {
			role := *h.Role
			d.Role = &role
		}
		if n := h.Edges.Node; n != nil {
			d.Node = nodeSummary(n, vms[n.ID])
		}
		el.Devices = append(el.Devices, d)
	}
	el.Units, el.UsedUnits = occupy(rk.Height, placements)
	el.FreeUnits = rk.Height - el.UsedUnits
	return el, nil
}

// The zones of a rack are shown by name only.
func powerZoneName(q *ent.PowerZoneQuery)     { q.Select(powerzone.FieldName) }
func networkZoneName(q *ent.NetworkZoneQuery) { q.Select(networkzone.FieldName) }
func rackZoneName(q *ent.RackZoneQuery)       { q.Select(rackzone.FieldName) }

// rackSummary names a rack and where it stands; fl may carry its datacenter.
func rackSummary(rk *ent.Rack, fl *ent.Floor) RackSummary {
	s := RackSummary{
		ID:       rk.ID,
		Name:     rk.Name,
		Row:      rk.Row,
		Position: rk.Position,
		Height:   rk.Height,
		Status:   rk.Status,
	}
	if fl != nil {
		s.FloorID, s.FloorName = fl.ID, fl.Name
		if dc := fl.Edges.Datacenter; dc != nil {
			s.DatacenterID, s.DatacenterName = dc.ID, dc.Name
		}
	}
	if z := rk.Edges.PowerZone; z != nil {
		s.PowerZone = &z.Name
	}
	if z := rk.Edges.NetworkZone; z != nil {
		s.NetworkZone = &z.Name
	}
	if z := rk.Edges.RackZone; z != nil {
		s.RackZone = &z.Name
	}
	return s
}

// occupy lays devices out on a rack of height units: the units from the top down with the
// device on each face, and how many units are occupied on at least one face. A full-depth
// device occupies both faces of its units, a half-depth one only its own face. Devices
// without a position are not mounted and take no unit; units outside the rack are ignored.
func occupy(height int, devices []placement) (units []RackUnit, used int) {
	units = make([]RackUnit, height)
	for i := range units {
		units[i].Unit = height - i
	}
	for _, d := range devices {
		if d.Position < 1 {
			continue
		}
		for u := d.Position; u < d.Position+max(d.Height, 1) && u <= height; u++ {
			id := d.ID
			unit := &units[height-u]
			if d.FullDepth || d.Face == host.FaceFront {
				unit.FrontDeviceID = &id
			}
			if d.FullDepth || d.Face == host.FaceRear {
				unit.RearDeviceID = &id
			}
		}
	}
	for _, u := range units {
		if u.FrontDeviceID != nil || u.RearDeviceID != nil {
			used++
		}
	}
	return units, used
}

// sortDevices orders hosts from the top of the rack down, front before rear.
func sortDevices(hosts []*ent.Host) {
	slices.SortFunc(hosts, func(a, b *ent.Host) int {
		return cmp.Or(cmp.Compare(b.Position, a.Position), cmp.Compare(a.Face, b.Face), cmp.Compare(a.ID, b.ID))
	})
}

// responsible lists maintainers, then maintainer groups, each by name.
func responsible(ms []*ent.Maintainer, gs []*ent.MaintainerGroup) []Responsible {
	out := make([]Responsible, 0, len(ms)+len(gs))
	for _, m := range ms {
		out = append(out, Responsible{ID: m.ID, Name: m.Name})
	}
	for _, g := range gs {
		out = append(out, Responsible{ID: g.ID, Name: g.Name, Group: true})
	}
	slices.SortStableFunc(out, func(a, b Responsible) int {
		if a.Group != b.Group {
			if a.Group {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return out
}
