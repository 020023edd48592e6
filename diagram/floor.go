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
	"github.com/virtflow/virtflow/ent/rack"
)

// Floor returns the floor plan of floor id: every rack with its row and position, zones,
// occupancy, device count, the capacity of the compute nodes in it and its open alerts. It
// runs at most 9 SQL statements whatever the number of racks and devices: the floor, its
// datacenter, the racks, their three zones, the mounted hosts and their nodes (ent eager
// loading) and one grouped count of open alerts. A floor that does not exist or that the
// viewer may not read is NOT_FOUND.
func Floor(ctx context.Context, c *ent.Client, id int) (*FloorView, error) {
	fl, err := c.Floor.Query().
		Where(floor.ID(id)).
		Select(floor.FieldName).
		WithDatacenter(func(q *ent.DatacenterQuery) { q.Select(datacenter.FieldName) }).
		WithRacks(func(q *ent.RackQuery) {
			q.Select(rack.FieldName, rack.FieldRow, rack.FieldPosition, rack.FieldHeight, rack.FieldStatus).
				WithPowerZone(powerZoneName).WithNetworkZone(networkZoneName).WithRackZone(rackZoneName).
				WithHosts(mountedHosts)
		}).
		Only(ctx)
	if err != nil {
		return nil, lookupError(err, "floor", id)
	}
	racks := fl.Edges.Racks
	sortRacks(racks)
	alerts, err := rackAlerts(ctx, c, racks)
	if err != nil {
		return nil, err
	}
	v := &FloorView{ID: fl.ID, Name: fl.Name, Racks: make([]FloorRack, 0, len(racks))}
	if dc := fl.Edges.Datacenter; dc != nil {
		v.DatacenterID, v.DatacenterName = dc.ID, dc.Name
	}
	for _, rk := range racks {
		fr := FloorRack{Rack: rackSummary(rk, fl), Hosts: len(rk.Edges.Hosts), Alerts: alerts[rk.ID]}
		_, fr.UsedUnits = occupy(rk.Height, rk.Edges.Hosts)
		fr.FreeUnits = rk.Height - fr.UsedUnits
		for _, h := range rk.Edges.Hosts {
			if n := h.Edges.Node; n != nil {
				fr.Capacity.add(n)
			}
		}
		v.Racks = append(v.Racks, fr)
	}
	return v, nil
}

// mountedHosts narrows a host query to the devices mounted at a position, with the columns
// occupancy needs and their nodes' capacity.
func mountedHosts(q *ent.HostQuery) {
	q.Where(host.PositionNotNil()).
		Select(host.FieldPosition, host.FieldHeight, host.FieldFace, host.FieldFullDepth).
		WithNode(capacityColumns)
}

// capacityColumns narrows a node query to the columns of Capacity.
func capacityColumns(q *ent.ComputeNodeQuery) {
	q.Select(computenode.FieldStatus,
		computenode.FieldCPUCapacity, computenode.FieldCPUAllocated,
		computenode.FieldMemoryCapacityMB, computenode.FieldMemoryAllocatedMB,
		computenode.FieldDiskCapacityGB, computenode.FieldDiskAllocatedGB)
}

// rackAlerts counts the open alerts of the hosts (and their nodes) loaded with racks, by rack.
func rackAlerts(ctx context.Context, c *ent.Client, racks []*ent.Rack) (map[int]AlertCounts, error) {
	var hostIDs, nodeIDs []int
	hostRack, nodeHost := map[int]int{}, map[int]int{}
	for _, rk := range racks {
		for _, h := range rk.Edges.Hosts {
			hostIDs = append(hostIDs, h.ID)
			hostRack[h.ID] = rk.ID
			if n := h.Edges.Node; n != nil {
				nodeIDs = append(nodeIDs, n.ID)
				nodeHost[n.ID] = h.ID
			}
		}
	}
	out := map[int]AlertCounts{}
	if len(hostIDs) == 0 {
		return out, nil
	}
	byHost, err := hostAlerts(ctx, c, alertsOf(hostIDs, nodeIDs), nodeHost)
	if err != nil {
		return nil, err
	}
	for h, a := range byHost {
		r := out[hostRack[h]]
		r.merge(a)
		out[hostRack[h]] = r
	}
	return out, nil
}

// sortRacks orders racks by row, position and name.
func sortRacks(racks []*ent.Rack) {
	slices.SortFunc(racks, func(a, b *ent.Rack) int {
		return cmp.Or(compareRow(a.Row, b.Row), cmp.Compare(a.Position, b.Position), cmp.Compare(a.Name, b.Name))
	})
}

// compareRow orders rows numerically when both are numbers ("2" before "10"), as text otherwise.
func compareRow(a, b string) int {
	if len(a) != len(b) && isDigits(a) && isDigits(b) {
		return cmp.Compare(len(a), len(b))
	}
	return cmp.Compare(a, b)
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}
