package diagram_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/virtflow/virtflow/domain/diagram"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/ent/port"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// smallNet is a layer-3 switch with two servers, an uplink router and two networks:
//
//	A:eth0 ── S:swp1      S:vlan100 ∈ N1 (tenant T's)      V:eth0 ∈ N1 (T's VM)
//	B:eth0 ── S:swp2      S:vlan200 ∈ N2                   W:eth0 ∈ N1 (another tenant's VM)
//	S:swp49 ── R:swp1
//
// A:eth0 has the address 10.x.1.10 of N1 without being a member of N1.
type smallNet struct {
	p                  string
	a, b, s, r         *ent.Host
	aEth0, sSwp1       *ent.Port
	n1, n2             *ent.Network
	v, w               *ent.VirtualMachine
	tenant             *ent.Tenant
	rackID             int
	linkAS             *ent.Link
	aAddr, vAddr, cidr string
}

func buildSmallNet(t *testing.T, c *ent.Client) *smallNet {
	t.Helper()
	ctx := gqltest.System()
	n := &smallNet{p: prefix("n")}
	p := n.p
	reg := c.Region.Create().SetName(p + "region").SaveX(ctx)
	dc := c.Datacenter.Create().SetName(p + "dc").SetRegion(reg).SaveX(ctx)
	fl := c.Floor.Create().SetName("floor-1-1-1").SetDatacenter(dc).SaveX(ctx)
	n.rackID = c.Rack.Create().SetName("rack-1-1").SetFloor(fl).SaveX(ctx).ID
	mk := func(name string, kind host.Kind) *ent.HostCreate {
		return c.Host.Create().SetName(p + name).SetKind(kind)
	}
	n.a = mk("a", host.KindServer).SaveX(ctx)
	n.b = mk("b", host.KindServer).SaveX(ctx)
	n.s = mk("s", host.KindSwitch).SetRole(host.RoleRackLeaf).SaveX(ctx)
	n.r = mk("r", host.KindRouter).SetRole(host.RoleRackSpine).SaveX(ctx)
	n.tenant = c.Tenant.Create().SetName(p + "t").SaveX(ctx)
	other := c.Tenant.Create().SetName(p + "u").SaveX(ctx)
	n.cidr = fmt.Sprintf("10.%d.1.0/24", 100+seq.Add(1)%150)
	base := strings.TrimSuffix(n.cidr, "0/24")
	n.n1 = c.Network.Create().SetName(p + "n1").SetCidr(n.cidr).SetVlan(100).SetTenant(n.tenant).SaveX(ctx)
	n.n2 = c.Network.Create().SetName(p + "n2").SetCidr("192.168.200.0/24").SetVrf(p).SetVlan(200).SaveX(ctx)

	n.aEth0 = c.Port.Create().SetName("eth0").SetHost(n.a).SetMAC(mac()).SaveX(ctx)
	bEth0 := c.Port.Create().SetName("eth0").SetHost(n.b).SaveX(ctx)
	n.sSwp1 = c.Port.Create().SetName("swp1").SetHost(n.s).SaveX(ctx)
	sSwp2 := c.Port.Create().SetName("swp2").SetHost(n.s).SaveX(ctx)
	sSwp49 := c.Port.Create().SetName("swp49").SetHost(n.s).SaveX(ctx)
	c.Port.Create().SetName("vlan100").SetHost(n.s).SetKind(port.KindVirtual).SetNetwork(n.n1).SetVlan(100).ExecX(ctx)
	c.Port.Create().SetName("vlan200").SetHost(n.s).SetKind(port.KindVirtual).SetNetwork(n.n2).SetVlan(200).ExecX(ctx)
	rSwp1 := c.Port.Create().SetName("swp1").SetHost(n.r).SaveX(ctx)
	n.linkAS = c.Link.Create().SetAPort(n.aEth0).SetBPort(n.sSwp1).SaveX(ctx)
	c.Link.Create().SetAPort(bEth0).SetBPort(sSwp2).SetLabel("b to s").ExecX(ctx)
	c.Link.Create().SetAPort(sSwp49).SetBPort(rSwp1).ExecX(ctx)

	fv := c.Flavor.Create().SetName(p + "f").SetVcpus(1).SetMemoryMB(1024).SaveX(ctx)
	n.v = c.VirtualMachine.Create().SetName(p + "v").SetTenant(n.tenant).SetRegion(reg).SetFlavor(fv).
		SetStatus(virtualmachine.StatusActive).SaveX(ctx)
	n.w = c.VirtualMachine.Create().SetName(p + "w").SetTenant(other).SetRegion(reg).SetFlavor(fv).SaveX(ctx)
	vEth0 := c.Port.Create().SetName("eth0").SetVirtualMachine(n.v).SetKind(port.KindVirtual).SetNetwork(n.n1).SaveX(ctx)
	c.Port.Create().SetName("eth0").SetVirtualMachine(n.w).SetKind(port.KindVirtual).SetNetwork(n.n1).ExecX(ctx)
	n.aAddr, n.vAddr = base+"10", base+"20"
	c.IPAddress.Create().SetNetwork(n.n1).SetPort(n.aEth0).SetAddress(n.aAddr).ExecX(ctx)
	c.IPAddress.Create().SetNetwork(n.n1).SetPort(vEth0).SetAddress(n.vAddr).ExecX(ctx)
	return n
}

// names lists the nodes of d as "KIND name" without the fixture prefix, sorted.
func names(d *diagram.NetworkDiagram, p string) []string {
	var out []string
	for _, n := range d.Nodes {
		out = append(out, string(n.Kind)+" "+strings.TrimPrefix(n.Name, p))
	}
	slices.Sort(out)
	return out
}

// edges lists the edges of d as "KIND source-target", sorted.
func edges(d *diagram.NetworkDiagram, p string) []string {
	name := map[int]string{}
	for _, n := range d.Nodes {
		name[n.ID] = strings.TrimPrefix(n.Name, p)
	}
	var out []string
	for _, e := range d.Edges {
		out = append(out, fmt.Sprintf("%s %s-%s", e.Kind, name[e.Source], name[e.Target]))
	}
	slices.Sort(out)
	return out
}

func TestNetworkDiagram(t *testing.T) {
	env := newEnv(t)
	n := buildSmallNet(t, env.Client)
	ctx := viewerCtx(t, env, gqltest.AdminToken)
	depth := func(d int) *int { return &d }
	tests := []struct {
		name      string
		from      int
		depth     *int
		nodes     []string
		edges     []string
		truncated bool
	}{
		{"host, depth 1", n.a.ID, depth(1),
			[]string{"HOST a", "SWITCH s"},
			[]string{"LINK a-s"}, true},
		{"port, default depth 2: the layer-3 switch shows its networks", n.aEth0.ID, nil,
			[]string{"HOST a", "HOST b", "NETWORK n1", "NETWORK n2", "ROUTER r", "SWITCH s"},
			[]string{"ATTACHMENT s-n1", "ATTACHMENT s-n2", "LINK a-s", "LINK b-s", "LINK s-r"}, true},
		{"host, depth 3: VM NICs on their networks", n.a.ID, depth(3),
			[]string{"HOST a", "HOST b", "NETWORK n1", "NETWORK n2", "ROUTER r", "SWITCH s", "VM v", "VM w"},
			[]string{"ATTACHMENT s-n1", "ATTACHMENT s-n2", "ATTACHMENT v-n1", "ATTACHMENT w-n1", "LINK a-s", "LINK b-s", "LINK s-r"}, false},
		{"network, depth 1", n.n1.ID, depth(1),
			[]string{"NETWORK n1", "SWITCH s", "VM v", "VM w"},
			[]string{"ATTACHMENT s-n1", "ATTACHMENT v-n1", "ATTACHMENT w-n1"}, true},
		{"VM, depth 1", n.v.ID, depth(1),
			[]string{"NETWORK n1", "VM v"},
			[]string{"ATTACHMENT v-n1"}, true},
		{"switch, depth 6: the whole network", n.s.ID, depth(6),
			[]string{"HOST a", "HOST b", "NETWORK n1", "NETWORK n2", "ROUTER r", "SWITCH s", "VM v", "VM w"},
			[]string{"ATTACHMENT s-n1", "ATTACHMENT s-n2", "ATTACHMENT v-n1", "ATTACHMENT w-n1", "LINK a-s", "LINK b-s", "LINK s-r"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := diagram.Network(ctx, env.Client, tt.from, tt.depth)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(d, n.p); !slices.Equal(got, tt.nodes) {
				t.Errorf("nodes = %q, want %q", got, tt.nodes)
			}
			if got := edges(d, n.p); !slices.Equal(got, tt.edges) {
				t.Errorf("edges = %q, want %q", got, tt.edges)
			}
			if d.Truncated != tt.truncated {
				t.Errorf("truncated = %v, want %v", d.Truncated, tt.truncated)
			}
		})
	}

	t.Run("nodes and ports in detail, through GraphQL", func(t *testing.T) {
		var out struct {
			NetworkDiagram struct {
				Nodes []struct {
					ID, Kind, Name     string
					Role, Status, CIDR *string
					VLAN               *int
				}
				Edges []struct {
					ID, Kind, Source, Target, Label string
					SourcePort, TargetPort          *struct {
						ID, Name  string
						MAC       *string
						VLAN      *int
						Addresses []string
					}
				}
				Truncated bool
			}
		}
		env.MustDo(t, `query($from: ID!) { networkDiagram(from: $from, depth: 2) {
		  nodes { id kind name role status cidr vlan }
		  edges { id kind source target label
		    sourcePort { id name mac vlan addresses } targetPort { id name mac vlan addresses } }
		  truncated } }`, map[string]any{"from": n.a.ID}, &out)
		d := out.NetworkDiagram
		if len(d.Nodes) == 0 || d.Nodes[0].ID != gqltest.ID(n.a.ID) || d.Nodes[0].Kind != "HOST" || deref(d.Nodes[0].Status) != "ACTIVE" {
			t.Fatalf("first node = %+v, want the start host", d.Nodes)
		}
		for _, nd := range d.Nodes {
			switch nd.Name {
			case n.p + "r":
				if nd.Kind != "ROUTER" || deref(nd.Role) != "RACK_SPINE" {
					t.Errorf("router = %+v", nd)
				}
			case n.p + "n1":
				if nd.Kind != "NETWORK" || deref(nd.CIDR) != n.cidr || deref(nd.VLAN) != 100 || nd.Status != nil {
					t.Errorf("network = %+v", nd)
				}
			}
		}
		var link, att bool
		for _, e := range d.Edges {
			switch {
			case e.ID == gqltest.ID(n.linkAS.ID):
				link = true
				sp, tp := e.SourcePort, e.TargetPort
				if e.Kind != "LINK" || e.Source != gqltest.ID(n.a.ID) || e.Target != gqltest.ID(n.s.ID) || sp == nil || tp == nil {
					t.Fatalf("link a-s = %+v", e)
				}
				if sp.ID != gqltest.ID(n.aEth0.ID) || sp.Name != "eth0" || deref(sp.MAC) != n.aEth0.MAC || !slices.Equal(sp.Addresses, []string{n.aAddr}) {
					t.Errorf("a end = %+v, want eth0 %s with %s", sp, n.aEth0.MAC, n.aAddr)
				}
				if tp.ID != gqltest.ID(n.sSwp1.ID) || tp.Name != "swp1" || tp.MAC != nil || len(tp.Addresses) != 0 {
					t.Errorf("s end = %+v", tp)
				}
				if e.Label != n.p+"a:eth0 -- "+n.p+"s:swp1" {
					t.Errorf("label = %q", e.Label)
				}
			case e.Kind == "ATTACHMENT" && e.Target == gqltest.ID(n.n1.ID):
				att = true
				if e.Source != gqltest.ID(n.s.ID) || e.SourcePort == nil || e.SourcePort.Name != "vlan100" || deref(e.SourcePort.VLAN) != 100 || e.TargetPort != nil {
					t.Errorf("attachment = %+v", e)
				}
			case e.Label == "b to s":
			}
		}
		if !link || !att {
			t.Errorf("missing the a-s link (%v) or the s-n1 attachment (%v): %+v", link, att, d.Edges)
		}
		if !d.Truncated {
			t.Errorf("not truncated, yet the VMs lie at depth 3")
		}
	})

	t.Run("bad input", func(t *testing.T) {
		q := `query($from: ID!, $depth: Int) { networkDiagram(from: $from, depth: $depth) { truncated } }`
		for _, d := range []int{0, 7, -1} {
			env.Do(t, q, map[string]any{"from": n.a.ID, "depth": d}).ExpectError(t, "VALIDATION", "depth")
		}
		for _, from := range []int{n.rackID, n.a.ID + 100000, n.n1.ID + 100000, n.aEth0.ID + 100000, 1 << 50} {
			env.Do(t, q, map[string]any{"from": from, "depth": 2}).ExpectError(t, "NOT_FOUND", "")
		}
	})

	t.Run("a tenant member sees its VMs and networks, not the hosts", func(t *testing.T) {
		member := env.As(tenantToken(t, env, n.tenant))
		var out struct {
			NetworkDiagram struct {
				Nodes     []struct{ Kind, Name string }
				Edges     []struct{ Kind, Source, Target string }
				Truncated bool
			}
		}
		member.MustDo(t, `query($from: ID!) { networkDiagram(from: $from, depth: 6) { nodes { kind name } edges { kind source target } truncated } }`,
			map[string]any{"from": n.v.ID}, &out)
		var got []string
		for _, nd := range out.NetworkDiagram.Nodes {
			got = append(got, nd.Kind+" "+strings.TrimPrefix(nd.Name, n.p))
		}
		if !slices.Equal(got, []string{"VM v", "NETWORK n1"}) || len(out.NetworkDiagram.Edges) != 1 {
			t.Errorf("member sees %q and %v, want only VM v on NETWORK n1", got, out.NetworkDiagram.Edges)
		}
		member.Do(t, `query($from: ID!) { networkDiagram(from: $from) { truncated } }`, map[string]any{"from": n.a.ID}).
			ExpectError(t, "NOT_FOUND", "")
	})
}

func TestNetworkDiagramSizeLimit(t *testing.T) {
	env := newEnv(t)
	c := env.Client
	ctx := gqltest.System()
	p := prefix("big")
	reg := c.Region.Create().SetName(p + "region").SaveX(ctx)
	tn := c.Tenant.Create().SetName(p + "t").SaveX(ctx)
	fv := c.Flavor.Create().SetName(p + "f").SetVcpus(1).SetMemoryMB(1024).SaveX(ctx)
	nw := c.Network.Create().SetName(p + "net").SetCidr("172.16.0.0/16").SetVrf(p).SaveX(ctx)
	const vms = diagram.MaxNodes + 50
	vb := make([]*ent.VirtualMachineCreate, vms)
	for i := range vb {
		vb[i] = c.VirtualMachine.Create().SetName(fmt.Sprintf("%svm%d", p, i)).SetTenant(tn).SetRegion(reg).SetFlavor(fv)
	}
	created := c.VirtualMachine.CreateBulk(vb[:vms/2]...).SaveX(ctx)
	created = append(created, c.VirtualMachine.CreateBulk(vb[vms/2:]...).SaveX(ctx)...)
	pb := make([]*ent.PortCreate, vms)
	for i, vm := range created {
		pb[i] = c.Port.Create().SetName("eth0").SetVirtualMachine(vm).SetNetwork(nw)
	}
	c.Port.CreateBulk(pb[:vms/2]...).ExecX(ctx)
	c.Port.CreateBulk(pb[vms/2:]...).ExecX(ctx)

	one := 1
	d, err := diagram.Network(viewerCtx(t, env, gqltest.AdminToken), c, nw.ID, &one)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Nodes) != diagram.MaxNodes || !d.Truncated {
		t.Errorf("%d nodes, truncated %v; want %d and truncated", len(d.Nodes), d.Truncated, diagram.MaxNodes)
	}
	for _, e := range d.Edges {
		if !slices.ContainsFunc(d.Nodes, func(n diagram.DiagramNode) bool { return n.ID == e.Source }) {
			t.Fatalf("edge %d starts at node %d, which is not in the diagram", e.ID, e.Source)
		}
	}
	if len(d.Edges) != diagram.MaxNodes-1 {
		t.Errorf("%d edges, want one attachment per VM shown (%d)", len(d.Edges), diagram.MaxNodes-1)
	}
}
