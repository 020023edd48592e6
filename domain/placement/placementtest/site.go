// Package placementtest builds placement test beds directly in the database: a region with a
// datacenter, racks in power, network and rack zones, hosts with compute nodes in clusters, a
// host group, a tenant and flavors. Tests of package placement and of the GraphQL API share
// it.
package placementtest

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/flavor"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/ent/hostgroup"
	"github.com/virtflow/virtflow/ent/provider"
	"github.com/virtflow/virtflow/ent/quota"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/ent/volume"
)

// Spec is the shape of a site. Racks are numbered from 0; rack i is in power zone
// i % PowerZones and network zone (i / PowerZones) % NetworkZones, so the two kinds of zone
// do not line up. Racks are in no rack zone (each is a rack failure domain of its own)
// unless RackZones is set: then rack i is in rack zone i / RackZones (pairs for 2).
type Spec struct {
	Racks, HostsPerRack      int
	PowerZones, NetworkZones int
	RackZones                int
	// Node is the capacity of every node.
	CPU       int
	MemoryMB  int64
	DiskGB    int64
	Cores     int // physical cores of each host (threads = 2 × cores)
	Providers bool
	// Labels, when set, labels node n (0-based, rack-major).
	Labels func(n int) fieldtype.Labels
}

// Site is a built test bed.
type Site struct {
	Prefix                        string
	Region, Datacenter, Floor     int
	Cluster, HostGroup, Tenant    int
	Provider                      int // "libvirt" provider of every node (with Spec.Providers)
	ProviderName                  string
	PowerZones, NetworkZones      []string
	Racks                         []Rack
	Nodes                         []Node
	c                             *ent.Client
	hosts                         int
	perRack                       map[int]int // hosts mounted per rack index
	zonesPower, zonesNet, zonesRk []int
}

// Rack is a rack of the site with its zone names.
type Rack struct {
	ID                                int
	Name, PowerZone, NetworkZone, Key string // Key is its rack failure domain
}

// Node is a compute node of the site.
type Node struct {
	ID, HostID, Rack int // Rack indexes Site.Racks
	Name             string
}

var seq atomic.Int64

// Ctx is the context tests write with: the system viewer.
func Ctx() context.Context { return authz.SystemContext(context.Background(), "placementtest") }

// Build creates a site with fresh names.
func Build(ctx context.Context, c *ent.Client, spec Spec) (*Site, error) {
	p := fmt.Sprintf("pt%d-%d", time.Now().UnixNano()%1e6, seq.Add(1))
	s := &Site{Prefix: p, c: c, perRack: map[int]int{}}
	var err error
	region, err := c.Region.Create().SetName(p + "-region").Save(ctx)
	if err != nil {
		return nil, err
	}
	s.Region = region.ID
	dc, err := c.Datacenter.Create().SetName(p + "-dc").SetRegionID(region.ID).Save(ctx)
	if err != nil {
		return nil, err
	}
	s.Datacenter = dc.ID
	fl, err := c.Floor.Create().SetName(p + "-floor").SetDatacenterID(dc.ID).Save(ctx)
	if err != nil {
		return nil, err
	}
	s.Floor = fl.ID
	for i := range max(spec.PowerZones, 1) {
		z, err := c.PowerZone.Create().SetName(fmt.Sprintf("%s-pz%d", p, i)).SetDatacenterID(dc.ID).Save(ctx)
		if err != nil {
			return nil, err
		}
		s.zonesPower = append(s.zonesPower, z.ID)
		s.PowerZones = append(s.PowerZones, z.Name)
	}
	for i := range max(spec.NetworkZones, 1) {
		z, err := c.NetworkZone.Create().SetName(fmt.Sprintf("%s-nz%d", p, i)).SetDatacenterID(dc.ID).Save(ctx)
		if err != nil {
			return nil, err
		}
		s.zonesNet = append(s.zonesNet, z.ID)
		s.NetworkZones = append(s.NetworkZones, z.Name)
	}
	if spec.RackZones > 0 {
		for i := range (spec.Racks + spec.RackZones - 1) / spec.RackZones {
			z, err := c.RackZone.Create().SetName(fmt.Sprintf("%s-rz%d", p, i)).SetDatacenterID(dc.ID).Save(ctx)
			if err != nil {
				return nil, err
			}
			s.zonesRk = append(s.zonesRk, z.ID)
		}
	}
	if spec.Providers {
		pr, err := c.Provider.Create().SetName(p + "-libvirt").SetKind(provider.KindVirtualMachine).
			SetDriver(provider.DriverLibvirt).Save(ctx)
		if err != nil {
			return nil, err
		}
		s.Provider, s.ProviderName = pr.ID, pr.Name
	}
	for i := range spec.Racks {
		pz, nz := i%len(s.zonesPower), (i/len(s.zonesPower))%len(s.zonesNet)
		b := c.Rack.Create().SetName(fmt.Sprintf("rack-%d", i)).SetFloorID(fl.ID).
			SetPowerZoneID(s.zonesPower[pz]).SetNetworkZoneID(s.zonesNet[nz])
		key := fmt.Sprintf("%s-floor/rack-%d", p, i)
		if spec.RackZones > 0 {
			b.SetRackZoneID(s.zonesRk[i/spec.RackZones])
			key = fmt.Sprintf("%s-rz%d", p, i/spec.RackZones)
		}
		r, err := b.Save(ctx)
		if err != nil {
			return nil, err
		}
		s.Racks = append(s.Racks, Rack{ID: r.ID, Name: r.Name, PowerZone: s.PowerZones[pz], NetworkZone: s.NetworkZones[nz], Key: key})
	}
	hg, err := c.HostGroup.Create().SetName(p + "-hg").Save(ctx)
	if err != nil {
		return nil, err
	}
	s.HostGroup = hg.ID
	cl, err := s.AddCluster(ctx, "a", 100, nil)
	if err != nil {
		return nil, err
	}
	s.Cluster = cl
	if _, err := s.AddNodes(ctx, cl, spec); err != nil {
		return nil, err
	}
	t, err := c.Tenant.Create().SetName(p + "-tenant").Save(ctx)
	if err != nil {
		return nil, err
	}
	s.Tenant = t.ID
	return s, nil
}

// AddCluster adds a cluster named <prefix>-<name> to the site's region and datacenter.
func (s *Site) AddCluster(ctx context.Context, name string, weight int, labels fieldtype.Labels) (int, error) {
	cl, err := s.c.Cluster.Create().SetName(s.Prefix + "-" + name).SetRegionID(s.Region).
		SetDatacenterID(s.Datacenter).SetWeight(weight).SetLabels(labels).Save(ctx)
	if err != nil {
		return 0, err
	}
	return cl.ID, nil
}

// AddNodes adds spec.Racks × spec.HostsPerRack hosts with Ready nodes to cluster, in the
// site's racks (which must exist), to the site's host group; it returns the new nodes.
func (s *Site) AddNodes(ctx context.Context, cluster int, spec Spec) ([]Node, error) {
	var hb []*ent.HostCreate
	var where []int
	for r := range min(spec.Racks, len(s.Racks)) {
		for range spec.HostsPerRack {
			s.hosts++
			s.perRack[r]++
			where = append(where, r)
			hb = append(hb, s.c.Host.Create().SetName(fmt.Sprintf("%s-host-%d", s.Prefix, s.hosts)).
				SetRackID(s.Racks[r].ID).SetPosition(s.perRack[r]).
				SetCPUCores(spec.Cores).SetCPUThreads(2*spec.Cores).AddHostGroupIDs(s.HostGroup))
		}
	}
	hosts, err := s.c.Host.CreateBulk(hb...).Save(ctx)
	if err != nil {
		return nil, err
	}
	nb := make([]*ent.ComputeNodeCreate, len(hosts))
	for i, h := range hosts {
		b := s.c.ComputeNode.Create().SetName(h.Name).SetHostID(h.ID).SetClusterID(cluster).
			SetStatus(computenode.StatusReady).SetCPUCapacity(spec.CPU).SetMemoryCapacityMB(spec.MemoryMB).
			SetDiskCapacityGB(spec.DiskGB)
		if spec.Labels != nil {
			b.SetLabels(spec.Labels(len(s.Nodes) + i))
		}
		if s.Provider != 0 {
			b.AddProviderIDs(s.Provider)
		}
		nb[i] = b
	}
	nodes, err := s.c.ComputeNode.CreateBulk(nb...).Save(ctx)
	if err != nil {
		return nil, err
	}
	var out []Node
	for i, n := range nodes {
		node := Node{ID: n.ID, HostID: hosts[i].ID, Rack: where[i], Name: n.Name}
		s.Nodes = append(s.Nodes, node)
		out = append(out, node)
	}
	return out, nil
}

// Flavor creates a flavor of the site (with the site's provider, if any).
func (s *Site) Flavor(ctx context.Context, vcpus int, memoryMB, diskGB int64, dedicated bool) (*ent.Flavor, error) {
	b := s.c.Flavor.Create().SetName(fmt.Sprintf("%s-f%d", s.Prefix, seq.Add(1))).
		SetVcpus(vcpus).SetMemoryMB(memoryMB).SetDiskGB(diskGB)
	if dedicated {
		b.SetCPUPolicy(flavor.CPUPolicyDedicated)
	}
	if s.Provider != 0 {
		b.SetProviderID(s.Provider)
	}
	return b.Save(ctx)
}

// Quota sets the tenant's quota in the site's host group.
func (s *Site) Quota(ctx context.Context, tenant, vcpus int, cpuPercent float64) (*ent.Quota, error) {
	return s.c.Quota.Create().SetTenantID(tenant).SetHostGroupID(s.HostGroup).
		SetVcpus(vcpus).SetCPUPercent(cpuPercent).Save(ctx)
}

// RackOf returns the rack index of a node of the site, -1 if unknown.
func (s *Site) RackOf(node int) int {
	for _, n := range s.Nodes {
		if n.ID == node {
			return n.Rack
		}
	}
	return -1
}

// Violation is a broken invariant found by Check.
type Violation string

// Check verifies the site's books with SQL sums: no node over capacity, each node's
// allocation equal to the flavors of the VMs on it, each quota's usage equal to the
// flavors of its tenant's VMs in the site. It returns what is wrong.
func (s *Site) Check(ctx context.Context) ([]Violation, error) {
	var out []Violation
	nodeIDs := make([]int, len(s.Nodes))
	for i, n := range s.Nodes {
		nodeIDs[i] = n.ID
	}
	type sum struct {
		Key   int   `sql:"k"`
		CPU   int   `sql:"cpu"`
		Mem   int64 `sql:"mem"`
		Disk  int64 `sql:"disk"`
		Count int   `sql:"n"`
	}
	// Sums of the flavors of the VMs on the site's nodes, by node or by tenant.
	sums := func(by string) (map[int]sum, error) {
		var rows []sum
		err := s.c.VirtualMachine.Query().Modify(func(q *sql.Selector) {
			f := sql.Table(flavor.Table).As("f")
			q.Join(f).On(q.C(virtualmachine.FlavorColumn), f.C(flavor.FieldID))
			q.Where(sql.InInts(q.C(virtualmachine.NodeColumn), nodeIDs...))
			q.GroupBy(q.C(by))
			q.Select()
			q.AppendSelectAs(q.C(by), "k")
			q.AppendSelectExprAs(sql.Expr("SUM("+f.C(flavor.FieldVcpus)+")"), "cpu")
			q.AppendSelectExprAs(sql.Expr("SUM("+f.C(flavor.FieldMemoryMB)+")"), "mem")
			q.AppendSelectExprAs(sql.Expr("SUM("+f.C(flavor.FieldDiskGB)+")"), "disk")
			q.AppendSelectExprAs(sql.Expr("COUNT(*)"), "n")
		}).Scan(ctx, &rows)
		out := map[int]sum{}
		for _, r := range rows {
			out[r.Key] = r
		}
		return out, err
	}
	byNode, err := sums(virtualmachine.NodeColumn)
	if err != nil {
		return nil, err
	}
	// Volumes created on the site's nodes count in their node's disk and their tenant's quota.
	vols, err := s.c.Volume.Query().Where(volume.HasNodeWith(computenode.IDIn(nodeIDs...))).WithNode().WithTenant().All(ctx)
	if err != nil {
		return nil, err
	}
	volByNode, volByTenant := map[int]int64{}, map[int]int64{}
	for _, v := range vols {
		volByNode[v.Edges.Node.ID] += v.SizeGB
		volByTenant[v.Edges.Tenant.ID] += v.SizeGB
	}
	for id, gb := range volByNode {
		n := byNode[id]
		n.Disk += gb
		byNode[id] = n
	}
	nodes, err := s.c.ComputeNode.Query().Where(computenode.IDIn(nodeIDs...)).All(ctx)
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		if n.CPUAllocated > n.CPUCapacity || n.MemoryAllocatedMB > n.MemoryCapacityMB || n.DiskAllocatedGB > n.DiskCapacityGB {
			out = append(out, Violation(fmt.Sprintf("node %s over capacity: %d/%d vCPUs, %d/%d MB, %d/%d GB", n.Name,
				n.CPUAllocated, n.CPUCapacity, n.MemoryAllocatedMB, n.MemoryCapacityMB, n.DiskAllocatedGB, n.DiskCapacityGB)))
		}
		want := byNode[n.ID]
		if n.CPUAllocated != want.CPU || n.MemoryAllocatedMB != want.Mem || n.DiskAllocatedGB != want.Disk {
			out = append(out, Violation(fmt.Sprintf("node %s allocates %d vCPUs, %d MB, %d GB; its VMs need %d, %d, %d",
				n.Name, n.CPUAllocated, n.MemoryAllocatedMB, n.DiskAllocatedGB, want.CPU, want.Mem, want.Disk)))
		}
	}
	// Every host of the site is in its host group: a tenant's quota there counts all its
	// VMs on the site's nodes.
	byTenant, err := sums(virtualmachine.TenantColumn)
	if err != nil {
		return nil, err
	}
	for id, gb := range volByTenant {
		t := byTenant[id]
		t.Disk += gb
		byTenant[id] = t
	}
	quotas, err := s.c.Quota.Query().Where(quota.HasHostGroupWith(hostgroup.ID(s.HostGroup))).WithTenant().All(ctx)
	if err != nil {
		return nil, err
	}
	for _, q := range quotas {
		want := byTenant[q.Edges.Tenant.ID]
		if q.UsedVcpus != want.CPU || q.UsedMemoryMB != want.Mem || q.UsedStorageGB != want.Disk {
			out = append(out, Violation(fmt.Sprintf("quota of tenant %s uses %d vCPUs, %d MB, %d GB; its VMs need %d, %d, %d",
				q.Edges.Tenant.Name, q.UsedVcpus, q.UsedMemoryMB, q.UsedStorageGB, want.CPU, want.Mem, want.Disk)))
		}
		if q.Vcpus > 0 && q.UsedVcpus > q.Vcpus {
			out = append(out, Violation(fmt.Sprintf("quota of tenant %s over its limit: %d of %d vCPUs",
				q.Edges.Tenant.Name, q.UsedVcpus, q.Vcpus)))
		}
		if q.MemoryMB > 0 && q.UsedMemoryMB > q.MemoryMB {
			out = append(out, Violation(fmt.Sprintf("quota of tenant %s over its limit: %d of %d MB",
				q.Edges.Tenant.Name, q.UsedMemoryMB, q.MemoryMB)))
		}
		if q.StorageGB > 0 && q.UsedStorageGB > q.StorageGB {
			out = append(out, Violation(fmt.Sprintf("quota of tenant %s over its limit: %d of %d GB",
				q.Edges.Tenant.Name, q.UsedStorageGB, q.StorageGB)))
		}
		if cores := s.GroupCores(ctx); q.CPUPercent > 0 && cores > 0 && float64(q.UsedVcpus)*100 > q.CPUPercent*float64(cores) {
			out = append(out, Violation(fmt.Sprintf("quota of tenant %s over its limit: %d vCPUs over %g%% of %d cores",
				q.Edges.Tenant.Name, q.UsedVcpus, q.CPUPercent, cores)))
		}
	}
	return out, nil
}

// GroupCores is the physical cores of the hosts of the site's host group (0 on error).
func (s *Site) GroupCores(ctx context.Context) int {
	hs, err := s.c.Host.Query().Where(host.HasHostGroupsWith(hostgroup.ID(s.HostGroup))).All(ctx)
	if err != nil {
		return 0
	}
	n := 0
	for _, h := range hs {
		n += h.CPUCores
	}
	return n
}

// RackSharing returns, for every region service with VMs on the site, the racks that hold
// more than one of its VMs (counted in SQL): what a hard rack anti-affinity forbids.
func (s *Site) RackSharing(ctx context.Context) ([]Violation, error) {
	nodeIDs := make([]int, len(s.Nodes))
	for i, n := range s.Nodes {
		nodeIDs[i] = n.ID
	}
	var rows []struct {
		Service int `sql:"svc"`
		Rack    int `sql:"rack"`
		Count   int `sql:"n"`
	}
	err := s.c.VirtualMachine.Query().Modify(func(q *sql.Selector) {
		cn, h := sql.Table(computenode.Table).As("cn"), sql.Table(host.Table).As("h")
		q.Join(cn).On(q.C(virtualmachine.NodeColumn), cn.C(computenode.FieldID))
		q.Join(h).On(cn.C(computenode.HostColumn), h.C(host.FieldID))
		q.Where(sql.And(sql.NotNull(q.C(virtualmachine.RegionServiceColumn)), sql.InInts(cn.C(computenode.FieldID), nodeIDs...)))
		q.GroupBy(q.C(virtualmachine.RegionServiceColumn), h.C(host.RackColumn))
		q.Select()
		q.AppendSelectAs(q.C(virtualmachine.RegionServiceColumn), "svc")
		q.AppendSelectAs(h.C(host.RackColumn), "rack")
		q.AppendSelectExprAs(sql.Expr("COUNT(*)"), "n")
	}).Scan(ctx, &rows)
	if err != nil {
		return nil, err
	}
	var out []Violation
	for _, r := range rows {
		if r.Count > 1 {
			out = append(out, Violation(fmt.Sprintf("region service %d has %d VMs in rack %d", r.Service, r.Count, r.Rack)))
		}
	}
	return out, nil
}
