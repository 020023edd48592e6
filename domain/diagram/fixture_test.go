package diagram_test

import (
	"context"
	"fmt"
	"net/netip"
	"sync/atomic"
	"testing"

	"github.com/virtflow/virtflow/domain/fabric"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/alert"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/ent/link"
	"github.com/virtflow/virtflow/ent/port"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// Fixtures are written straight through ent as the system (bulk creates), with names from a
// package-wide counter so that tests and benchmarks sharing the package's database never
// collide.

var seq atomic.Int64

// prefix returns a fresh name prefix such as "s12-".
func prefix(kind string) string { return fmt.Sprintf("%s%d-", kind, seq.Add(1)) }

// siteSpec is the shape of a site: racks of servers with ports, VMs and the fabric.
type siteSpec struct {
	Racks      int  // server racks (even: the fabric pairs them)
	Servers    int  // 1U servers per rack, from U1 up (at most 40)
	Ports      int  // ports per server: eth0 and eth1 go to the fabric, eth2… to the rack's storage switch
	VMsPerNode int  // active VMs on every node
	Fabric     bool // build the seed-001 fabric (package fabric) and the storage switches
}

// site is a datacenter with one floor: a network rack rack-0-1 and server racks rack-1-1…
// (44U) of 1U servers, each with a compute node in one cluster.
type site struct {
	p        string
	spec     siteSpec
	region   *ent.Region
	dc       *ent.Datacenter
	floor    *ent.Floor
	netRack  *ent.Rack
	racks    []*ent.Rack
	servers  [][]*ent.Host // by rack
	nodes    map[int]*ent.ComputeNode
	cluster  *ent.Cluster
	tenant   *ent.Tenant
	flavor   *ent.Flavor
	networks []*ent.Network // storage, service, … (eth2, eth3, …), each with a VLAN
	mgmt     *ent.Network   // addresses of eth0 and eth1
	group    *ent.HostGroup
	maint    *ent.Maintainer
	team     *ent.MaintainerGroup
	root     *fabric.Root
	fab      *fabric.Result
	vms      int
	// firstPort is eth0 of the first server.
	firstPort int
}

var cidrSeq atomic.Int64

// prefix16 returns a fresh 10.x.0.0/16.
func prefix16() netip.Prefix {
	n := cidrSeq.Add(1)
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(n), 0, 0}), 16)
}

// nth is the n-th address of p (n ≥ 1).
func nth(p netip.Prefix, n int) string {
	a := p.Addr().As4()
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	v += uint32(n)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}).String()
}

var macSeq atomic.Int64

func mac() string {
	n := macSeq.Add(1)
	return fmt.Sprintf("02:%02x:%02x:%02x:%02x:%02x", (n>>32)&0xff, (n>>24)&0xff, (n>>16)&0xff, (n>>8)&0xff, n&0xff)
}

// buildSite writes a site of the given shape.
func buildSite(tb testing.TB, c *ent.Client, spec siteSpec) *site {
	tb.Helper()
	ctx := gqltest.System()
	must := func(err error) {
		tb.Helper()
		if err != nil {
			tb.Fatalf("build site: %v", err)
		}
	}
	s := &site{p: prefix("s"), spec: spec, nodes: map[int]*ent.ComputeNode{}}
	p := s.p
	var err error
	s.region, err = c.Region.Create().SetName(p + "region").Save(ctx)
	must(err)
	s.dc, err = c.Datacenter.Create().SetName(p + "dc").SetRegion(s.region).Save(ctx)
	must(err)
	s.floor, err = c.Floor.Create().SetName("floor-1-1-1").SetDatacenter(s.dc).Save(ctx)
	must(err)
	pz, err := c.PowerZone.Create().SetName(p + "pdu-a").SetDatacenter(s.dc).Save(ctx)
	must(err)
	nz, err := c.NetworkZone.Create().SetName(p + "l3-1").SetDatacenter(s.dc).Save(ctx)
	must(err)
	s.netRack, err = c.Rack.Create().SetName("rack-0-1").SetRow("0").SetPosition(1).SetFloor(s.floor).Save(ctx)
	must(err)
	rb := make([]*ent.RackCreate, spec.Racks)
	for i := range rb {
		rb[i] = c.Rack.Create().SetName(fmt.Sprintf("rack-1-%d", i+1)).SetRow("1").SetPosition(i + 1).SetHeight(44).
			SetFloor(s.floor).SetPowerZone(pz).SetNetworkZone(nz)
	}
	s.racks, err = c.Rack.CreateBulk(rb...).Save(ctx)
	must(err)
	s.cluster, err = c.Cluster.Create().SetName(p + "cluster").SetRegion(s.region).SetDatacenter(s.dc).Save(ctx)
	must(err)

	// Servers, their nodes, ports and addresses.
	var hb []*ent.HostCreate
	for _, rk := range s.racks {
		for i := 1; i <= spec.Servers; i++ {
			hb = append(hb, c.Host.Create().SetName(fabric.ServerName(p, s.floor.Name, rk.Name, i)).
				SetKind(host.KindServer).SetModel("R660").SetRack(rk).SetPosition(i).SetHeight(1).
				SetPowerZone(pz).SetNetworkZone(nz))
		}
	}
	hosts, err := fabric.SaveBulk(ctx, hb, func(ctx context.Context, bs []*ent.HostCreate) ([]*ent.Host, error) {
		return c.Host.CreateBulk(bs...).Save(ctx)
	})
	must(err)
	s.servers = make([][]*ent.Host, spec.Racks)
	for i, h := range hosts {
		s.servers[i/max(spec.Servers, 1)] = append(s.servers[i/max(spec.Servers, 1)], h)
	}
	nb := make([]*ent.ComputeNodeCreate, len(hosts))
	for i, h := range hosts {
		status := computenode.StatusReady
		switch i % 10 {
		case 3:
			status = computenode.StatusNotReady
		case 7:
			status = computenode.StatusDown
		}
		nb[i] = c.ComputeNode.Create().SetName(h.Name).SetHost(h).SetCluster(s.cluster).SetStatus(status).
			SetSchedulable(i%10 != 5).SetCPUCapacity(64).SetMemoryCapacityMB(256 << 10).SetDiskCapacityGB(2000).
			SetCPUAllocated(2 * spec.VMsPerNode).SetMemoryAllocatedMB(int64(4096 * spec.VMsPerNode)).SetDiskAllocatedGB(int64(20 * spec.VMsPerNode))
	}
	nodes, err := fabric.SaveBulk(ctx, nb, func(ctx context.Context, bs []*ent.ComputeNodeCreate) ([]*ent.ComputeNode, error) {
		return c.ComputeNode.CreateBulk(bs...).Save(ctx)
	})
	must(err)
	for i, n := range nodes {
		s.nodes[hosts[i].ID] = n
	}

	if spec.Ports > 0 {
		mg := prefix16()
		s.mgmt, err = c.Network.Create().SetName(p + "mgmt").SetCidr(mg.String()).SetVlan(10).Save(ctx)
		must(err)
		for k := 2; k < spec.Ports; k++ {
			pf := prefix16()
			n, err := c.Network.Create().SetName(fmt.Sprintf("%snet%d", p, k)).SetCidr(pf.String()).SetVlan(100 + k).
				SetGateway(nth(pf, 1)).Save(ctx)
			must(err)
			s.networks = append(s.networks, n)
		}
		var pb []*ent.PortCreate
		for _, h := range hosts {
			for k := range spec.Ports {
				b := c.Port.Create().SetName(fmt.Sprintf("eth%d", k)).SetHost(h).SetMAC(mac()).SetSpeedMbps(25000)
				if k >= 2 {
					b.SetNetwork(s.networks[k-2]).SetVlan(s.networks[k-2].Vlan)
				}
				pb = append(pb, b)
			}
		}
		ports, err := fabric.SaveBulk(ctx, pb, func(ctx context.Context, bs []*ent.PortCreate) ([]*ent.Port, error) {
			return c.Port.CreateBulk(bs...).Save(ctx)
		})
		must(err)
		s.firstPort = ports[0].ID
		var ib []*ent.IPAddressCreate
		for i, pt := range ports {
			h, k := i/spec.Ports, i%spec.Ports
			switch {
			case k < 2:
				ib = append(ib, c.IPAddress.Create().SetNetwork(s.mgmt).SetPort(pt).SetAddress(nth(mg, 2+2*h+k)))
			default:
				n := s.networks[k-2]
				ib = append(ib, c.IPAddress.Create().SetNetwork(n).SetPort(pt).SetAddress(nth(netip.MustParsePrefix(n.Cidr), 2+h)))
			}
		}
		_, err = fabric.SaveBulk(ctx, ib, func(ctx context.Context, bs []*ent.IPAddressCreate) ([]*ent.IPAddress, error) {
			return c.IPAddress.CreateBulk(bs...).Save(ctx)
		})
		must(err)
		if spec.Fabric && spec.Ports > 2 {
			s.storageSwitches(tb, c, ports)
		}
	}

	if spec.Fabric {
		s.root, err = fabric.BuildRoot(ctx, c, s.dc.ID, fabric.WithHostPrefix(p), fabric.WithRack(s.netRack.ID))
		must(err)
		s.fab, err = fabric.Build(ctx, c, fabric.FloorSpec{FloorID: s.floor.ID, NetworkRackID: s.netRack.ID,
			Root: s.root, HostPrefix: p})
		must(err)
	}

	// Tenancy and VMs.
	s.tenant, err = c.Tenant.Create().SetName(p + "tenant").Save(ctx)
	must(err)
	s.flavor, err = c.Flavor.Create().SetName(p + "small").SetVcpus(2).SetMemoryMB(4096).SetDiskGB(20).Save(ctx)
	must(err)
	var vb []*ent.VirtualMachineCreate
	for _, n := range nodes {
		for j := range spec.VMsPerNode {
			vb = append(vb, c.VirtualMachine.Create().SetName(fmt.Sprintf("%svm-%d-%d", p, n.ID%100000, j)).
				SetTenant(s.tenant).SetRegion(s.region).SetFlavor(s.flavor).SetCluster(s.cluster).SetNode(n).
				SetStatus(virtualmachine.StatusActive))
		}
	}
	vms, err := fabric.SaveBulk(ctx, vb, func(ctx context.Context, bs []*ent.VirtualMachineCreate) ([]*ent.VirtualMachine, error) {
		return c.VirtualMachine.CreateBulk(bs...).Save(ctx)
	})
	must(err)
	s.vms = len(vms)

	// Operations: a warning on every 7th host, a critical alert on every 13th node, and a
	// closed one that must not count.
	var ab []*ent.AlertCreate
	for i, h := range hosts {
		if i%7 == 0 {
			ab = append(ab, c.Alert.Create().SetName("disk").SetSeverity(alert.SeverityWarning).SetHost(h))
		}
		if i%13 == 0 {
			ab = append(ab, c.Alert.Create().SetName("mce").SetSeverity(alert.SeverityCritical).SetNode(nodes[i]))
		}
		if i%5 == 0 {
			ab = append(ab, c.Alert.Create().SetName("old").SetSeverity(alert.SeverityFatal).SetHost(h).SetStatus(alert.StatusClosed))
		}
	}
	_, err = fabric.SaveBulk(ctx, ab, func(ctx context.Context, bs []*ent.AlertCreate) ([]*ent.Alert, error) {
		return c.Alert.CreateBulk(bs...).Save(ctx)
	})
	must(err)

	// Responsibility: one maintainer and one group for every server, and a host group.
	ids := make([]int, len(hosts))
	for i, h := range hosts {
		ids[i] = h.ID
	}
	s.maint, err = c.Maintainer.Create().SetName("Ops " + p).SetAccount(p + "ops").AddHostIDs(ids...).Save(ctx)
	must(err)
	s.team, err = c.MaintainerGroup.Create().SetName(p + "team").AddHostIDs(ids...).Save(ctx)
	must(err)
	s.group, err = c.HostGroup.Create().SetName(p + "hosts").AddHostIDs(ids...).Save(ctx)
	must(err)
	return s
}

// storageSwitches mounts a storage switch at U41 of every server rack and cables the servers'
// eth2, eth3, … (ports, in host order) to it.
func (s *site) storageSwitches(tb testing.TB, c *ent.Client, ports []*ent.Port) {
	tb.Helper()
	ctx := gqltest.System()
	sb := make([]*ent.HostCreate, len(s.racks))
	for i, rk := range s.racks {
		sb[i] = c.Host.Create().SetName(fmt.Sprintf("%s%s-%s-storage-switch01", s.p, s.floor.Name, rk.Name)).
			SetKind(host.KindSwitch).SetModel("SN2201").SetRack(rk).SetPosition(41).SetHeight(1).
			SetFullDepth(false).SetFace(host.FaceRear)
	}
	switches, err := c.Host.CreateBulk(sb...).Save(ctx)
	if err != nil {
		tb.Fatalf("create storage switches: %v", err)
	}
	var pb []*ent.PortCreate
	var near []*ent.Port
	for i, pt := range ports {
		h, k := i/s.spec.Ports, i%s.spec.Ports
		if k < 2 {
			continue
		}
		rack := h / s.spec.Servers
		pb = append(pb, c.Port.Create().SetName(fmt.Sprintf("swp%d", (h%s.spec.Servers)*(s.spec.Ports-2)+k-1)).
			SetHost(switches[rack]).SetMAC(mac()).SetKind(port.KindPhysical))
		near = append(near, pt)
	}
	far, err := fabric.SaveBulk(ctx, pb, func(ctx context.Context, bs []*ent.PortCreate) ([]*ent.Port, error) {
		return c.Port.CreateBulk(bs...).Save(ctx)
	})
	if err != nil {
		tb.Fatalf("create storage switch ports: %v", err)
	}
	lb := make([]*ent.LinkCreate, len(far))
	for i := range far {
		lb[i] = c.Link.Create().SetAPort(near[i]).SetBPort(far[i]).SetKind(link.KindDac)
	}
	if _, err := fabric.SaveBulk(ctx, lb, func(ctx context.Context, bs []*ent.LinkCreate) ([]*ent.Link, error) {
		return c.Link.CreateBulk(bs...).Save(ctx)
	}); err != nil {
		tb.Fatalf("cable storage switches: %v", err)
	}
}
