package diagram

import (
	"cmp"
	"context"
	"slices"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/datacenter"
	"github.com/virtflow/virtflow/ent/floor"
	"github.com/virtflow/virtflow/ent/rack"
)

// Floor returns the floor plan of floor id: every rack with its row and position, zones,
// occupancy, device count, the capacity of the compute nodes in it and its open alerts. It
// runs at most 9 SQL statements whatever the number of racks and devices: the floor, its
// datacenter, the racks and their three zones (ent eager loading), then the mounted devices,
// their compute nodes and one grouped count of open alerts (loadRackContents). A floor that
// does not exist or that the viewer may not read is NOT_FOUND.
func Floor(ctx context.Context, c *ent.Client, id int) (*FloorView, error) {
	fl, err := c.Floor.Query().
		Where(floor.ID(id)).
		Select(floor.FieldName).
		WithDatacenter(func(q *ent.DatacenterQuery) { q.Select(datacenter.FieldName) }).
		WithRacks(func(q *ent.RackQuery) {
			q.Select(rack.FieldName, rack.FieldRow, rack.FieldPosition, rack.FieldHeight, rack.FieldStatus).
				WithPowerZone(powerZoneName).WithNetworkZone(networkZoneName).WithRackZone(rackZoneName)
		}).
		Only(ctx)
	if err != nil {
		return nil, lookupError(err, "floor", id)
	}
	racks := fl.Edges.Racks
	sortRacks(racks)
	ids := make([]int, len(racks))
	for i, rk := range racks {
		ids[i] = rk.ID
	}
	contents, err := loadRackContents(ctx, c, ids)
	if err != nil {
		return nil, err
	}
	v := &FloorView{ID: fl.ID, Name: fl.Name, Racks: make([]FloorRack, 0, len(racks))}
	if dc := fl.Edges.Datacenter; dc != nil {
		v.DatacenterID, v.DatacenterName = dc.ID, dc.Name
	}
	for _, rk := range racks {
		fr := FloorRack{Rack: rackSummary(rk, fl), Alerts: contents.alerts[rk.ID]}
		fr.UsedUnits, fr.Hosts, fr.Capacity = contents.usage(rk.ID, rk.Height)
		fr.FreeUnits = rk.Height - fr.UsedUnits
		v.Racks = append(v.Racks, fr)
	}
	return v, nil
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
