package placement

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/scheduler"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/availabilityzone"
	"github.com/virtflow/virtflow/ent/cluster"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/floor"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/ent/hostgroup"
	"github.com/virtflow/virtflow/ent/networkzone"
	"github.com/virtflow/virtflow/ent/powerzone"
	"github.com/virtflow/virtflow/ent/provider"
	"github.com/virtflow/virtflow/ent/quota"
	"github.com/virtflow/virtflow/ent/rack"
	"github.com/virtflow/virtflow/ent/rackzone"
	"github.com/virtflow/virtflow/ent/region"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
)

// Snapshot is what one decision is made against: the scheduler's view of a region's
// clusters and nodes and of one tenant's quotas, plus what committing needs besides.
type Snapshot struct {
	scheduler.Snapshot
	TenantID, RegionID int

	nodes  map[int]nodeInfo                 // by node ID
	quotas map[scheduler.QuotaKey]quotaInfo // a tenant's quota in a host group
	// multiGroup says that some node's host is in more than one host group: which group
	// the node counts in then depends on the tenant (hostGroupFor), so the snapshot is
	// only valid for TenantID.
	multiGroup bool
	// reserved says that the decision made on this snapshot (a view of the cache's) was
	// reserved in the cache already (Snapshots.decide).
	reserved bool
	// cells, in a view of the cache's, is the NUMA node an exclusive NUMA_NODE decision
	// takes on each of its nodes (numaCells), chosen when the decision was made.
	cells map[int]int
}

// nodeInfo is what the commit needs of a node beyond scheduler.Node.
type nodeInfo struct {
	name           string
	clusterID      int
	hostGroupID    int
	threadsPerCore int
	azID           int // its availability zone, 0 when none
}

// quotaInfo is the tenant's quota row in a host group and the group's physical cores.
type quotaInfo struct {
	id         int
	groupCores int
}

// regionKey is the scheduler's region name of a region: its ID, which clusters and
// requests both carry.
func regionKey(id int) string { return strconv.Itoa(id) }

// Load reads the snapshot of a region for a tenant in at most ten small queries, whatever
// the number of nodes (see the package comment for the rules). The reads are unrestricted: placing a
// tenant's VM must see the nodes the tenant may not read. In PostgreSQL's default
// isolation each query sees what was committed when it started; the commit re-checks
// anything that matters.
func Load(ctx context.Context, c *ent.Client, tenantID, regionID int) (*Snapshot, error) {
	return load(ctx, c, tenantID, regionID)
}

// load is Load; with tenantID 0 it reads the quotas of every tenant in the host groups of
// the region's nodes instead of one tenant's (the cached snapshot of Snapshots, valid for
// every tenant unless multiGroup).
func load(ctx context.Context, c *ent.Client, tenantID, regionID int) (*Snapshot, error) {
	ctx = authz.Unrestricted(ctx)
	s := &Snapshot{TenantID: tenantID, RegionID: regionID,
		nodes: map[int]nodeInfo{}, quotas: map[scheduler.QuotaKey]quotaInfo{}}
	s.Quotas = map[scheduler.QuotaKey]scheduler.Quota{}

	clusters, err := c.Cluster.Query().
		Where(func(q *sql.Selector) { q.Where(sql.EQ(q.C(cluster.RegionColumn), regionID)) }).
		Select(cluster.FieldName, cluster.FieldLabels, cluster.FieldWeight).
		Order(ent.Asc(cluster.FieldID)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("load clusters of region %d: %w", regionID, err)
	}
	if len(clusters) == 0 {
		return s, nil
	}
	regionClosed, err := c.Region.Query().Where(region.ID(regionID), region.StatusEQ(region.StatusClosed)).Exist(ctx)
	if err != nil {
		return nil, fmt.Errorf("status of region %d: %w", regionID, err)
	}
	clusterIDs := make([]int, len(clusters))
	for i, cl := range clusters {
		clusterIDs[i] = cl.ID
		s.Clusters = append(s.Clusters, scheduler.Cluster{ID: cl.ID, Name: cl.Name, Region: regionKey(regionID),
			Labels: cl.Labels, Weight: cl.Weight})
	}

	rows, err := loadNodes(ctx, c, clusterIDs)
	if err != nil {
		return nil, err
	}
	groups, err := loadNodeGroups(ctx, c, clusterIDs)
	if err != nil {
		return nil, err
	}
	providers, err := loadNodeProviders(ctx, c, clusterIDs)
	if err != nil {
		return nil, err
	}
	var quotas []quotaRow
	if tenantID != 0 {
		quotas, err = loadQuotas(ctx, c, tenantID)
	} else {
		quotas, err = loadGroupQuotas(ctx, c, groups)
	}
	if err != nil {
		return nil, err
	}
	withQuota := map[int]bool{}
	for _, q := range quotas {
		withQuota[q.GroupID] = true
	}
	for _, gs := range groups {
		if len(gs) > 1 {
			s.multiGroup = true
		}
	}

	s.Nodes = make([]scheduler.Node, 0, len(rows))
	for _, r := range rows {
		var labels map[string]string
		if len(r.Labels) > 0 && string(r.Labels) != "null" {
			if err := json.Unmarshal(r.Labels, &labels); err != nil {
				return nil, fmt.Errorf("labels of node %d: %w", r.ID, err)
			}
		}
		t := threadsPerCore(r.Cores, r.Threads)
		numa, err := numaNodes(r.NUMANodes)
		if err != nil {
			return nil, fmt.Errorf("NUMA nodes of node %d: %w", r.ID, err)
		}
		n := scheduler.Node{
			ExclusiveMask: r.ExclusiveMask, NUMANodes: numa,
			ID: r.ID, Name: r.Name, ClusterID: r.ClusterID,
			Ready:       r.Status == computenode.StatusReady.String(),
			Schedulable: r.Schedulable,
			Providers:   providers[r.ID], Labels: labels, AvailabilityZone: r.AZ,
			PowerZone: r.PowerZone, RackZone: r.RackZone, NetworkZone: r.NetworkZone,
			HostGroupID: hostGroupFor(groups[r.ID], withQuota),
			CPUCapacity: r.CPUCapacity, CPUAllocated: r.CPUAllocated,
			MemoryMB: r.MemoryMB, MemoryAllocatedMB: r.MemoryAllocatedMB,
			DiskGB: r.DiskGB, DiskAllocatedGB: r.DiskAllocatedGB,
			DedicatedCoresFree: dedicatedFree(r.CPUCapacity, r.CPUAllocated, t),
			Lifecycle:          lifecycle(regionClosed, r.HostLifecycle, r.RackStatus),
		}
		s.Nodes = append(s.Nodes, n)
		s.nodes[r.ID] = nodeInfo{name: r.Name, clusterID: r.ClusterID, hostGroupID: n.HostGroupID, threadsPerCore: t, azID: r.AZID}
	}

	if len(quotas) > 0 {
		ids := make([]int, 0, len(quotas))
		for _, q := range quotas {
			ids = append(ids, q.GroupID)
		}
		cores, err := groupCores(ctx, c, ids)
		if err != nil {
			return nil, err
		}
		for _, q := range quotas {
			s.setQuota(q, cores[q.GroupID])
		}
	}
	return s, nil
}

// setQuota puts a quota row into the snapshot, with its group's physical cores.
func (s *Snapshot) setQuota(q quotaRow, cores int) {
	k := scheduler.QuotaKey{TenantID: q.TenantID, HostGroupID: q.GroupID}
	s.quotas[k] = quotaInfo{id: q.ID, groupCores: cores}
	s.Quotas[k] = scheduler.Quota{
		VCPUs: q.VCPUs, UsedVCPUs: q.UsedVCPUs,
		CPUPercent: q.CPUPercent, GroupCores: cores,
		MemoryMB: q.MemoryMB, UsedMemoryMB: q.UsedMemoryMB,
		StorageGB: q.StorageGB, UsedStorageGB: q.UsedStorageGB,
	}
}

// lifecycle is why a node takes no new VMs, from its region's status, its host's lifecycle
// and its rack's status; empty when it may.
func lifecycle(regionClosed bool, hostLifecycle, rackStatus string) scheduler.Code {
	switch {
	case regionClosed:
		return scheduler.LifecycleRegionClosed
	case hostLifecycle == host.LifecycleRetired.String():
		return scheduler.LifecycleHostRetired
	case hostLifecycle == host.LifecycleMaintenance.String():
		return scheduler.LifecycleHostMaintenance
	case rackStatus == rack.StatusDecommissioning.String():
		return scheduler.LifecycleRackDecommissioning
	}
	return ""
}

// threadsPerCore is a host's hardware threads per physical core, 1 when unknown.
func threadsPerCore(cores, threads int) int {
	if cores <= 0 || threads <= cores || threads%cores != 0 {
		return 1
	}
	return threads / cores
}

// dedicatedFree is the free vCPUs of a node rounded down to whole cores of t threads:
// what dedicated (pinned) vCPUs may still take. commit.go checks the same in SQL.
func dedicatedFree(capacity, allocated, t int) int {
	free := capacity - allocated
	if free <= 0 {
		return 0
	}
	return free / t * t
}

// hostGroupFor is the host group a node counts in for a tenant: the lowest-id group of
// its host that has a quota for the tenant, else the lowest-id group, else 0.
func hostGroupFor(groups []int, withQuota map[int]bool) int {
	best := 0
	for _, g := range groups { // ascending
		if withQuota[g] {
			return g
		}
		if best == 0 {
			best = g
		}
	}
	return best
}

// nodeRow is a compute node with what placement needs of its host, rack and zones.
type nodeRow struct {
	ID                int    `sql:"id"`
	Name              string `sql:"name"`
	Status            string `sql:"status"`
	Schedulable       bool   `sql:"schedulable"`
	Labels            []byte `sql:"labels"`
	CPUCapacity       int    `sql:"cpu_capacity"`
	CPUAllocated      int    `sql:"cpu_allocated"`
	MemoryMB          int64  `sql:"memory_capacity_mb"`
	MemoryAllocatedMB int64  `sql:"memory_allocated_mb"`
	DiskGB            int64  `sql:"disk_capacity_gb"`
	DiskAllocatedGB   int64  `sql:"disk_allocated_gb"`
	ExclusiveMask     int64  `sql:"exclusive_mask"`
	NUMANodes         []byte `sql:"numa_nodes"`
	ClusterID         int    `sql:"cluster_id"`
	HostLifecycle     string `sql:"host_lifecycle"`
	RackStatus        string `sql:"-"`
	AZ                string `sql:"az"`
	AZID              int    `sql:"az_id"`
	Cores             int    `sql:"cores"`
	Threads           int    `sql:"threads"`
	Rack              int    `sql:"rack_id"`
	HostPower         int    `sql:"host_power"`
	HostNetwork       int    `sql:"host_network"`
	HostRack          int    `sql:"host_rack"`
	PowerZone         string `sql:"-"`
	NetworkZone       string `sql:"-"`
	RackZone          string `sql:"-"`
}

// rackRow is a rack with its floor's name and its zones.
type rackRow struct {
	ID      int    `sql:"id"`
	Name    string `sql:"name"`
	Floor   string `sql:"floor"`
	Power   int    `sql:"power"`
	Network int    `sql:"network"`
	Rack    int    `sql:"rack"`
	Status  string `sql:"status"`
}

// loadNodes reads the nodes of the clusters with their host's cores, threads and zones and
// their AZ, then the racks of their hosts and the names of every zone involved, in five
// queries of at most three tables each (one query joining all eleven costs PostgreSQL more
// to plan than the five to run). A host's own zone overrides its rack's; a rack in no rack
// zone is one of its own, "<floor>/<rack>".
func loadNodes(ctx context.Context, c *ent.Client, clusterIDs []int) ([]nodeRow, error) {
	var rows []nodeRow
	err := c.ComputeNode.Query().
		Where(func(s *sql.Selector) { s.Where(sql.InInts(s.C(computenode.ClusterColumn), clusterIDs...)) }).
		Modify(func(s *sql.Selector) {
			h, az := sql.Table(host.Table).As("h"), sql.Table(availabilityzone.Table).As("az")
			s.LeftJoin(h).On(s.C(computenode.HostColumn), h.C(host.FieldID))
			s.LeftJoin(az).On(s.C(computenode.AvailabilityZoneColumn), az.C(availabilityzone.FieldID))
			s.Select(s.Columns(computenode.FieldID, computenode.FieldName, computenode.FieldStatus,
				computenode.FieldSchedulable, computenode.FieldLabels,
				computenode.FieldCPUCapacity, computenode.FieldCPUAllocated,
				computenode.FieldMemoryCapacityMB, computenode.FieldMemoryAllocatedMB,
				computenode.FieldDiskCapacityGB, computenode.FieldDiskAllocatedGB,
				computenode.FieldExclusiveMask, computenode.FieldNumaNodes)...)
			s.AppendSelectAs(s.C(computenode.ClusterColumn), "cluster_id")
			s.AppendSelectAs(az.C(availabilityzone.FieldName), "az")
			s.AppendSelectExprAs(sql.Expr(fmt.Sprintf("COALESCE(%s, 0)", az.C(availabilityzone.FieldID))), "az_id")
			s.AppendSelectAs(h.C(host.FieldCPUCores), "cores")
			s.AppendSelectAs(h.C(host.FieldCPUThreads), "threads")
			s.AppendSelectAs(h.C(host.RackColumn), "rack_id")
			s.AppendSelectAs(h.C(host.PowerZoneColumn), "host_power")
			s.AppendSelectAs(h.C(host.NetworkZoneColumn), "host_network")
			s.AppendSelectAs(h.C(host.RackZoneColumn), "host_rack")
			s.AppendSelectExprAs(sql.Expr(fmt.Sprintf("COALESCE(%s, '')", h.C(host.FieldLifecycle))), "host_lifecycle")
			s.OrderBy(s.C(computenode.FieldID))
		}).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("load nodes: %w", err)
	}
	rackIDs := map[int]bool{}
	for _, r := range rows {
		if r.Rack != 0 {
			rackIDs[r.Rack] = true
		}
	}
	var racks []rackRow
	if len(rackIDs) > 0 {
		err = c.Rack.Query().Where(rack.IDIn(sortedKeys(rackIDs)...)).Modify(func(s *sql.Selector) {
			fl := sql.Table(floor.Table).As("fl")
			s.LeftJoin(fl).On(s.C(rack.FloorColumn), fl.C(floor.FieldID))
			s.Select(s.Columns(rack.FieldID, rack.FieldName)...)
			s.AppendSelectAs(fl.C(floor.FieldName), "floor")
			s.AppendSelectAs(s.C(rack.PowerZoneColumn), "power")
			s.AppendSelectAs(s.C(rack.NetworkZoneColumn), "network")
			s.AppendSelectAs(s.C(rack.RackZoneColumn), "rack")
			s.AppendSelectAs(s.C(rack.FieldStatus), "status")
		}).Scan(ctx, &racks)
		if err != nil {
			return nil, fmt.Errorf("load racks of nodes: %w", err)
		}
	}
	byRack := make(map[int]rackRow, len(racks))
	power, network, rackZone := map[int]bool{}, map[int]bool{}, map[int]bool{}
	add := func(m map[int]bool, id int) {
		if id != 0 {
			m[id] = true
		}
	}
	for _, r := range racks {
		byRack[r.ID] = r
		add(power, r.Power)
		add(network, r.Network)
		add(rackZone, r.Rack)
	}
	for _, r := range rows {
		add(power, r.HostPower)
		add(network, r.HostNetwork)
		add(rackZone, r.HostRack)
	}
	powerNames, err := zoneNames(ctx, c.PowerZone.Query().Where(powerzone.IDIn(sortedKeys(power)...)).Select(powerzone.FieldID, powerzone.FieldName).Scan, len(power))
	if err != nil {
		return nil, fmt.Errorf("load power zones: %w", err)
	}
	networkNames, err := zoneNames(ctx, c.NetworkZone.Query().Where(networkzone.IDIn(sortedKeys(network)...)).Select(networkzone.FieldID, networkzone.FieldName).Scan, len(network))
	if err != nil {
		return nil, fmt.Errorf("load network zones: %w", err)
	}
	rackNames, err := zoneNames(ctx, c.RackZone.Query().Where(rackzone.IDIn(sortedKeys(rackZone)...)).Select(rackzone.FieldID, rackzone.FieldName).Scan, len(rackZone))
	if err != nil {
		return nil, fmt.Errorf("load rack zones: %w", err)
	}
	pick := func(own, inherited int) int {
		if own != 0 {
			return own
		}
		return inherited
	}
	for i := range rows {
		r := &rows[i]
		rk, mounted := byRack[r.Rack]
		r.PowerZone = powerNames[pick(r.HostPower, rk.Power)]
		r.NetworkZone = networkNames[pick(r.HostNetwork, rk.Network)]
		r.RackZone = rackNames[pick(r.HostRack, rk.Rack)]
		r.RackStatus = rk.Status
		if r.RackZone == "" && mounted {
			r.RackZone = rk.Floor + "/" + rk.Name
		}
	}
	return rows, nil
}

// zoneNames runs a zone query selecting id and name, unless there is nothing to look up.
func zoneNames(ctx context.Context, scan func(context.Context, any) error, n int) (map[int]string, error) {
	out := map[int]string{}
	if n == 0 {
		return out, nil
	}
	var zs []struct {
		ID   int    `sql:"id"`
		Name string `sql:"name"`
	}
	if err := scan(ctx, &zs); err != nil {
		return nil, err
	}
	for _, z := range zs {
		out[z.ID] = z.Name
	}
	return out, nil
}

// loadNodeGroups maps every node of the clusters to its host's groups, ascending.
func loadNodeGroups(ctx context.Context, c *ent.Client, clusterIDs []int) (map[int][]int, error) {
	return groupsOfNodes(ctx, c, func(cn *sql.SelectTable) *sql.Predicate {
		return sql.InInts(cn.C(computenode.ClusterColumn), clusterIDs...)
	})
}

// groupsOfNodes maps the nodes that match where (a predicate over the compute_nodes table)
// to their host's groups, ascending, in one query.
func groupsOfNodes(ctx context.Context, c *ent.Client, where func(cn *sql.SelectTable) *sql.Predicate) (map[int][]int, error) {
	var pairs []struct {
		NodeID  int `sql:"node_id"`
		GroupID int `sql:"group_id"`
	}
	err := c.HostGroup.Query().Modify(func(s *sql.Selector) {
		hgh, cn := sql.Table(hostgroup.HostsTable).As("hgh"), sql.Table(computenode.Table).As("cn")
		s.Join(hgh).On(s.C(hostgroup.FieldID), hgh.C(hostgroup.HostsPrimaryKey[0]))
		s.Join(cn).On(hgh.C(hostgroup.HostsPrimaryKey[1]), cn.C(computenode.HostColumn))
		s.Where(where(cn))
		s.Select()
		s.AppendSelectAs(cn.C(computenode.FieldID), "node_id")
		s.AppendSelectAs(s.C(hostgroup.FieldID), "group_id")
		s.OrderBy(cn.C(computenode.FieldID), s.C(hostgroup.FieldID))
	}).Scan(ctx, &pairs)
	if err != nil {
		return nil, fmt.Errorf("load host groups of nodes: %w", err)
	}
	out := map[int][]int{}
	for _, p := range pairs {
		out[p.NodeID] = append(out[p.NodeID], p.GroupID)
	}
	return out, nil
}

// loadNodeProviders maps every node of the clusters to the names of its providers.
func loadNodeProviders(ctx context.Context, c *ent.Client, clusterIDs []int) (map[int][]string, error) {
	var pairs []struct {
		NodeID int    `sql:"node_id"`
		Name   string `sql:"provider"`
	}
	err := c.Provider.Query().Modify(func(s *sql.Selector) {
		cnp, cn := sql.Table(computenode.ProvidersTable).As("cnp"), sql.Table(computenode.Table).As("cn")
		s.Join(cnp).On(s.C(provider.FieldID), cnp.C(computenode.ProvidersPrimaryKey[1]))
		s.Join(cn).On(cnp.C(computenode.ProvidersPrimaryKey[0]), cn.C(computenode.FieldID))
		s.Where(sql.InInts(cn.C(computenode.ClusterColumn), clusterIDs...))
		s.Select()
		s.AppendSelectAs(cn.C(computenode.FieldID), "node_id")
		s.AppendSelectAs(s.C(provider.FieldName), "provider")
		s.OrderBy(cn.C(computenode.FieldID), s.C(provider.FieldName))
	}).Scan(ctx, &pairs)
	if err != nil {
		return nil, fmt.Errorf("load providers of nodes: %w", err)
	}
	out := map[int][]string{}
	for _, p := range pairs {
		if !slices.Contains(out[p.NodeID], p.Name) {
			out[p.NodeID] = append(out[p.NodeID], p.Name)
		}
	}
	return out, nil
}

// quotaRow is a quota with the host group it is set on.
type quotaRow struct {
	ID            int     `sql:"id"`
	GroupID       int     `sql:"group_id"`
	TenantID      int     `sql:"tenant_id"`
	CPUPercent    float64 `sql:"cpu_percent"`
	VCPUs         int     `sql:"vcpus"`
	MemoryMB      int64   `sql:"memory_mb"`
	StorageGB     int64   `sql:"storage_gb"`
	UsedVCPUs     int     `sql:"used_vcpus"`
	UsedMemoryMB  int64   `sql:"used_memory_mb"`
	UsedStorageGB int64   `sql:"used_storage_gb"`
}

// loadQuotas reads the tenant's quotas, by host group.
func loadQuotas(ctx context.Context, c *ent.Client, tenantID int) ([]quotaRow, error) {
	var rows []quotaRow
	err := c.Quota.Query().
		Where(func(s *sql.Selector) { s.Where(sql.EQ(s.C(quota.TenantColumn), tenantID)) }).
		Modify(selectQuotaRow).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("load quotas of tenant %d: %w", tenantID, err)
	}
	return rows, nil
}

// loadGroupQuotas reads the quotas of every tenant in the host groups of groups (node →
// its host's groups).
func loadGroupQuotas(ctx context.Context, c *ent.Client, groups map[int][]int) ([]quotaRow, error) {
	ids := map[int]bool{}
	for _, gs := range groups {
		for _, g := range gs {
			ids[g] = true
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	var rows []quotaRow
	err := c.Quota.Query().
		Where(func(s *sql.Selector) { s.Where(sql.InInts(s.C(quota.HostGroupColumn), sortedKeys(ids)...)) }).
		Modify(selectQuotaRow).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("load quotas of host groups: %w", err)
	}
	return rows, nil
}

// selectQuotaRow selects the columns of a quotaRow.
func selectQuotaRow(s *sql.Selector) {
	s.Select(s.Columns(quota.FieldID, quota.FieldCPUPercent, quota.FieldVcpus, quota.FieldMemoryMB,
		quota.FieldStorageGB, quota.FieldUsedVcpus, quota.FieldUsedMemoryMB, quota.FieldUsedStorageGB)...)
	s.AppendSelectAs(s.C(quota.HostGroupColumn), "group_id")
	s.AppendSelectAs(s.C(quota.TenantColumn), "tenant_id")
	s.OrderBy(s.C(quota.FieldID))
}

// groupCores sums the physical cores of the hosts of each group.
func groupCores(ctx context.Context, c *ent.Client, groupIDs []int) (map[int]int, error) {
	var rows []struct {
		GroupID int `sql:"group_id"`
		Cores   int `sql:"cores"`
	}
	err := c.HostGroup.Query().Where(hostgroup.IDIn(groupIDs...)).Modify(func(s *sql.Selector) {
		hgh, h := sql.Table(hostgroup.HostsTable).As("hgh"), sql.Table(host.Table).As("h")
		s.Join(hgh).On(s.C(hostgroup.FieldID), hgh.C(hostgroup.HostsPrimaryKey[0]))
		s.Join(h).On(hgh.C(hostgroup.HostsPrimaryKey[1]), h.C(host.FieldID))
		s.GroupBy(s.C(hostgroup.FieldID))
		s.Select()
		s.AppendSelectAs(s.C(hostgroup.FieldID), "group_id")
		s.AppendSelectExprAs(sql.Expr(fmt.Sprintf("COALESCE(SUM(%s), 0)", h.C(host.FieldCPUCores))), "cores")
	}).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("sum cores of host groups: %w", err)
	}
	out := make(map[int]int, len(rows))
	for _, r := range rows {
		out[r.GroupID] = r.Cores
	}
	return out, nil
}

// pos is the index in s.Nodes of node id (a linear search: only exclusive placements of a
// snapshot loaded without the cache ask).
func (s *Snapshot) pos(id int) (int, bool) {
	for i := range s.Nodes {
		if s.Nodes[i].ID == id {
			return i, true
		}
	}
	return 0, false
}

// numaNodes decodes a node's numa_nodes column for the scheduler.
func numaNodes(raw []byte) ([]scheduler.NUMANode, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var ns []fieldtype.NUMANode
	if err := json.Unmarshal(raw, &ns); err != nil {
		return nil, err
	}
	out := make([]scheduler.NUMANode, len(ns))
	for i, n := range ns {
		out[i] = scheduler.NUMANode{ID: n.ID, CPUs: len(n.CPUs), MemoryMB: n.MemoryMB}
	}
	return out, nil
}
