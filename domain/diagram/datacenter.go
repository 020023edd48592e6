package diagram

import (
	"cmp"
	"context"
	"slices"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/cluster"
	"github.com/virtflow/virtflow/ent/datacenter"
	"github.com/virtflow/virtflow/ent/floor"
	"github.com/virtflow/virtflow/ent/rack"
	"github.com/virtflow/virtflow/ent/region"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// Datacenter returns the floors of datacenter id, each with its rack count, occupancy, device
// count, compute capacity and open alerts, and the clusters of the datacenter with their
// capacity and VM count. It runs at most 10 SQL statements whatever the size of the
// datacenter: the datacenter, its region, floors and racks, the clusters and their nodes (ent
// eager loading), the mounted devices, their nodes and one grouped count of open alerts
// (loadRackContents), and one grouped count of VMs. A datacenter that does not exist or that
// the viewer may not read is NOT_FOUND.
func Datacenter(ctx context.Context, c *ent.Client, id int) (*DatacenterView, error) {
	dc, err := c.Datacenter.Query().
		Where(datacenter.ID(id)).
		Select(datacenter.FieldName).
		WithRegion(func(q *ent.RegionQuery) { q.Select(region.FieldName) }).
		WithFloors(func(q *ent.FloorQuery) {
			q.Select(floor.FieldName).WithRacks(func(q *ent.RackQuery) { q.Select(rack.FieldHeight) })
		}).
		WithClusters(func(q *ent.ClusterQuery) { q.Select(cluster.FieldName).WithNodes(capacityColumns) }).
		Only(ctx)
	if err != nil {
		return nil, lookupError(err, "datacenter", id)
	}
	v := &DatacenterView{ID: dc.ID, Name: dc.Name}
	if r := dc.Edges.Region; r != nil {
		v.RegionID, v.RegionName = &r.ID, &r.Name
	}

	floors := dc.Edges.Floors
	slices.SortFunc(floors, func(a, b *ent.Floor) int { return cmp.Compare(a.Name, b.Name) })
	var rackIDs []int
	for _, fl := range floors {
		for _, rk := range fl.Edges.Racks {
			rackIDs = append(rackIDs, rk.ID)
		}
	}
	contents, err := loadRackContents(ctx, c, rackIDs)
	if err != nil {
		return nil, err
	}
	v.Floors = make([]FloorSummary, 0, len(floors))
	for _, fl := range floors {
		fs := FloorSummary{ID: fl.ID, Name: fl.Name, Racks: len(fl.Edges.Racks)}
		for _, rk := range fl.Edges.Racks {
			used, devices, capacity := contents.usage(rk.ID, rk.Height)
			fs.UsedUnits += used
			fs.TotalUnits += rk.Height
			fs.Hosts += devices
			fs.Capacity.merge(capacity)
			fs.Alerts.merge(contents.alerts[rk.ID])
		}
		v.Floors = append(v.Floors, fs)
	}

	clusters := dc.Edges.Clusters
	slices.SortFunc(clusters, func(a, b *ent.Cluster) int { return cmp.Compare(a.Name, b.Name) })
	ids := make([]int, len(clusters))
	for i, cl := range clusters {
		ids[i] = cl.ID
	}
	vms, err := vmCounts(ctx, c, virtualmachine.ClusterColumn, ids)
	if err != nil {
		return nil, err
	}
	v.Clusters = make([]ClusterSummary, 0, len(clusters))
	for _, cl := range clusters {
		v.Clusters = append(v.Clusters, clusterSummary(cl, vms[cl.ID]))
	}
	return v, nil
}

// clusterSummary is a cluster with the capacity of its loaded nodes and its VM count.
func clusterSummary(cl *ent.Cluster, vms int) ClusterSummary {
	s := ClusterSummary{ID: cl.ID, Name: cl.Name, VMCount: vms}
	for _, n := range cl.Edges.Nodes {
		s.Capacity.add(capacityOf(n))
	}
	return s
}
