package diagram

import (
	"context"
	"fmt"

	"entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/host"
)

// The floor and datacenter views summarise hundreds or thousands of devices per answer. They
// read the few columns they aggregate (where each device sits, what its node offers) into
// small rows rather than whole ent entities, which are some ten times larger and dominated the
// views' time; the reads still go through the caller's client, so the privacy policy applies.

// placement is where a device sits: the columns occupancy needs.
type placement struct {
	ID        int       `sql:"id"`
	Rack      nullInt   `sql:"rack_hosts"`
	Position  int       `sql:"position"`
	Height    int       `sql:"height"`
	Face      host.Face `sql:"face"`
	FullDepth bool      `sql:"full_depth"`
}

// placementOf is where h sits.
func placementOf(h *ent.Host) placement {
	return placement{ID: h.ID, Position: h.Position, Height: h.Height, Face: h.Face, FullDepth: h.FullDepth}
}

// nodeCapacity is a compute node's state and allocation: the columns Capacity adds up.
type nodeCapacity struct {
	ID                int                `sql:"id"`
	Host              nullInt            `sql:"host_node"`
	Status            computenode.Status `sql:"status"`
	CPUCapacity       int                `sql:"cpu_capacity"`
	CPUAllocated      int                `sql:"cpu_allocated"`
	MemoryCapacityMB  int64              `sql:"memory_capacity_mb"`
	MemoryAllocatedMB int64              `sql:"memory_allocated_mb"`
	DiskCapacityGB    int64              `sql:"disk_capacity_gb"`
	DiskAllocatedGB   int64              `sql:"disk_allocated_gb"`
}

// capacityOf is the state and allocation of n.
func capacityOf(n *ent.ComputeNode) nodeCapacity {
	return nodeCapacity{ID: n.ID, Status: n.Status, CPUCapacity: n.CPUCapacity, CPUAllocated: n.CPUAllocated,
		MemoryCapacityMB: n.MemoryCapacityMB, MemoryAllocatedMB: n.MemoryAllocatedMB,
		DiskCapacityGB: n.DiskCapacityGB, DiskAllocatedGB: n.DiskAllocatedGB}
}

// rackContents is what stands in a set of racks: the mounted devices by rack, the compute
// nodes by host, and the open alerts by rack.
type rackContents struct {
	devices map[int][]placement  // by rack id
	nodes   map[int]nodeCapacity // by host id
	alerts  map[int]AlertCounts  // by rack id
	hosts   map[int]int          // rack id of each host
}

// loadRackContents reads the devices mounted in racks, their compute nodes and their open
// alerts: three statements whatever the number of racks and devices.
func loadRackContents(ctx context.Context, c *ent.Client, racks []int) (*rackContents, error) {
	rc := &rackContents{devices: map[int][]placement{}, nodes: map[int]nodeCapacity{},
		alerts: map[int]AlertCounts{}, hosts: map[int]int{}}
	if len(racks) == 0 {
		return rc, nil
	}
	var devices []placement
	err := c.Host.Query().
		Where(func(s *sql.Selector) {
			s.Where(sql.And(idIn(s, host.RackColumn, racks), sql.NotNull(s.C(host.FieldPosition))))
		}).
		Modify(func(s *sql.Selector) {
			s.Select(s.C(host.FieldID), s.C(host.RackColumn), s.C(host.FieldPosition), s.C(host.FieldHeight),
				s.C(host.FieldFace), s.C(host.FieldFullDepth))
		}).
		Scan(ctx, &devices)
	if err != nil {
		return nil, fmt.Errorf("load mounted devices: %w", err)
	}
	if len(devices) == 0 {
		return rc, nil
	}
	hostIDs := make([]int, len(devices))
	rc.hosts = make(map[int]int, len(devices))
	for i, d := range devices {
		hostIDs[i] = d.ID
		rc.hosts[d.ID] = fk(d.Rack)
		rc.devices[fk(d.Rack)] = append(rc.devices[fk(d.Rack)], d)
	}

	var nodes []nodeCapacity
	err = c.ComputeNode.Query().
		Where(func(s *sql.Selector) { s.Where(idIn(s, computenode.HostColumn, hostIDs)) }).
		Modify(func(s *sql.Selector) {
			s.Select(s.C(computenode.FieldID), s.C(computenode.HostColumn), s.C(computenode.FieldStatus),
				s.C(computenode.FieldCPUCapacity), s.C(computenode.FieldCPUAllocated),
				s.C(computenode.FieldMemoryCapacityMB), s.C(computenode.FieldMemoryAllocatedMB),
				s.C(computenode.FieldDiskCapacityGB), s.C(computenode.FieldDiskAllocatedGB))
		}).
		Scan(ctx, &nodes)
	if err != nil {
		return nil, fmt.Errorf("load compute nodes: %w", err)
	}
	nodeIDs := make([]int, len(nodes))
	nodeHost := make(map[int]int, len(nodes))
	rc.nodes = make(map[int]nodeCapacity, len(nodes))
	for i, n := range nodes {
		nodeIDs[i] = n.ID
		nodeHost[n.ID] = fk(n.Host)
		rc.nodes[fk(n.Host)] = n
	}

	byHost, err := hostAlerts(ctx, c, alertsOf(hostIDs, nodeIDs), nodeHost)
	if err != nil {
		return nil, err
	}
	for h, a := range byHost {
		r := rc.alerts[rc.hosts[h]]
		r.merge(a)
		rc.alerts[rc.hosts[h]] = r
	}
	return rc, nil
}

// usage sums up one rack: its occupied units, devices and the capacity of their nodes.
func (rc *rackContents) usage(rackID, height int) (used, devices int, capacity Capacity) {
	ds := rc.devices[rackID]
	_, used = occupy(height, ds)
	for _, d := range ds {
		if n, ok := rc.nodes[d.ID]; ok {
			capacity.add(n)
		}
	}
	return used, len(ds), capacity
}

// capacityColumns narrows an eager-loaded node query to the columns of Capacity.
func capacityColumns(q *ent.ComputeNodeQuery) {
	q.Select(computenode.FieldStatus,
		computenode.FieldCPUCapacity, computenode.FieldCPUAllocated,
		computenode.FieldMemoryCapacityMB, computenode.FieldMemoryAllocatedMB,
		computenode.FieldDiskCapacityGB, computenode.FieldDiskAllocatedGB)
}
