package diagram_test

import (
	"fmt"
	"testing"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/alert"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// smallRack is a 12U rack laid out to exercise every case of an elevation:
//
//	U10     srv3   full depth, no compute node (planned)
//	U8      srv2   full depth, node DOWN and cordoned, a FATAL alert on its node
//	U5      sw     half depth, front (a rack-leaf switch)
//	U5      pdu    half depth, rear
//	U1-U2   srv1   full depth 2U, node READY with 2 VMs (and a deleted one), a CRITICAL and a
//	               WARNING alert on the host, a WARNING on the node, a closed FATAL one;
//	               maintainer Alice and group <p>team
//
// and every other unit empty.
type smallRack struct {
	p                          string
	dc                         *ent.Datacenter
	floor                      *ent.Floor
	rack                       *ent.Rack
	cluster                    *ent.Cluster
	srv1, srv2, srv3, sw, pdu  *ent.Host
	node1, node2               *ent.ComputeNode
	tenant                     *ent.Tenant
	vms                        []*ent.VirtualMachine
	maintainer                 *ent.Maintainer
	team                       *ent.MaintainerGroup
	powerZone, netZone, rackZn string
}

func buildSmallRack(t *testing.T, c *ent.Client) *smallRack {
	t.Helper()
	ctx := gqltest.System()
	r := &smallRack{p: prefix("r")}
	p := r.p
	reg := c.Region.Create().SetName(p + "region").SaveX(ctx)
	r.dc = c.Datacenter.Create().SetName(p + "dc").SetRegion(reg).SaveX(ctx)
	r.floor = c.Floor.Create().SetName("floor-1-2-3").SetDatacenter(r.dc).SaveX(ctx)
	r.powerZone, r.netZone, r.rackZn = p+"pdu-b", p+"l3-2", p+"pair-1"
	pz := c.PowerZone.Create().SetName(r.powerZone).SetDatacenter(r.dc).SaveX(ctx)
	nz := c.NetworkZone.Create().SetName(r.netZone).SetDatacenter(r.dc).SaveX(ctx)
	rz := c.RackZone.Create().SetName(r.rackZn).SetDatacenter(r.dc).SaveX(ctx)
	r.rack = c.Rack.Create().SetName("rack-3-7").SetRow("3").SetPosition(7).SetHeight(12).SetFloor(r.floor).
		SetPowerZone(pz).SetNetworkZone(nz).SetRackZone(rz).SaveX(ctx)
	mount := func(name string, kind host.Kind, pos, height int) *ent.HostCreate {
		return c.Host.Create().SetName(p + name).SetKind(kind).SetRack(r.rack).SetPosition(pos).SetHeight(height).SetModel("M-" + name)
	}
	r.srv1 = mount("srv1", host.KindServer, 1, 2).SaveX(ctx)
	r.sw = mount("sw", host.KindSwitch, 5, 1).SetFullDepth(false).SetFace(host.FaceFront).SetRole(host.RoleRackLeaf).SaveX(ctx)
	r.pdu = mount("pdu", host.KindPdu, 5, 1).SetFullDepth(false).SetFace(host.FaceRear).SaveX(ctx)
	r.srv2 = mount("srv2", host.KindServer, 8, 1).SaveX(ctx)
	r.srv3 = mount("srv3", host.KindServer, 10, 1).SetLifecycle(host.LifecyclePlanned).SaveX(ctx)

	r.cluster = c.Cluster.Create().SetName(p + "cluster").SetRegion(reg).SetDatacenter(r.dc).SaveX(ctx)
	r.node1 = c.ComputeNode.Create().SetName(p + "node1").SetHost(r.srv1).SetCluster(r.cluster).
		SetStatus(computenode.StatusReady).SetCPUCapacity(64).SetCPUAllocated(8).
		SetMemoryCapacityMB(262144).SetMemoryAllocatedMB(16384).SetDiskCapacityGB(1000).SetDiskAllocatedGB(80).SaveX(ctx)
	r.node2 = c.ComputeNode.Create().SetName(p + "node2").SetHost(r.srv2).SetCluster(r.cluster).
		SetStatus(computenode.StatusDown).SetSchedulable(false).SetCPUCapacity(32).SetMemoryCapacityMB(131072).SaveX(ctx)

	r.tenant = c.Tenant.Create().SetName(p + "acme").SaveX(ctx)
	fl := c.Flavor.Create().SetName(p + "m1").SetVcpus(4).SetMemoryMB(8192).SaveX(ctx)
	for i, st := range []virtualmachine.Status{virtualmachine.StatusActive, virtualmachine.StatusStopped, virtualmachine.StatusDeleted} {
		r.vms = append(r.vms, c.VirtualMachine.Create().SetName(fmt.Sprintf("%svm%d", p, i+1)).SetTenant(r.tenant).
			SetRegion(reg).SetFlavor(fl).SetCluster(r.cluster).SetNode(r.node1).SetStatus(st).SaveX(ctx))
	}

	c.Alert.Create().SetName("psu").SetSeverity(alert.SeverityCritical).SetHost(r.srv1).ExecX(ctx)
	c.Alert.Create().SetName("fan").SetSeverity(alert.SeverityWarning).SetHost(r.srv1).ExecX(ctx)
	c.Alert.Create().SetName("load").SetSeverity(alert.SeverityWarning).SetNode(r.node1).ExecX(ctx)
	c.Alert.Create().SetName("old").SetSeverity(alert.SeverityFatal).SetHost(r.srv1).SetStatus(alert.StatusClosed).ExecX(ctx)
	c.Alert.Create().SetName("dead").SetSeverity(alert.SeverityFatal).SetNode(r.node2).ExecX(ctx)

	r.maintainer = c.Maintainer.Create().SetName("Alice").SetAccount(p + "alice").AddHosts(r.srv1).SaveX(ctx)
	r.team = c.MaintainerGroup.Create().SetName(p + "team").AddHosts(r.srv1).SaveX(ctx)
	return r
}

const elevationQuery = `query($id: ID!) { rackElevation(id: $id) {
  rack { id name row position height status floorID floorName datacenterID datacenterName powerZone networkZone rackZone }
  units { unit frontDeviceID rearDeviceID }
  devices { id name kind role model position height face fullDepth lifecycle
    node { id name status cordoned cpuCapacity cpuAllocated memoryCapacityMB memoryAllocatedMB vmCount }
    alerts { fatal critical warning worst }
    maintainers { id name group } }
  usedUnits freeUnits } }`

type gqlElevation struct {
	Rack struct {
		ID, Name, Row, Status, FloorID, FloorName, DatacenterID, DatacenterName string
		Position, Height                                                        int
		PowerZone, NetworkZone, RackZone                                        *string
	}
	Units []struct {
		Unit                        int
		FrontDeviceID, RearDeviceID *string
	}
	Devices []struct {
		ID, Name, Kind, Model, Face, Lifecycle string
		Role                                   *string
		Position, Height                       int
		FullDepth                              bool
		Node                                   *struct {
			ID, Name, Status                                                        string
			Cordoned                                                                bool
			CPUCapacity, CPUAllocated, MemoryCapacityMB, MemoryAllocatedMB, VMCount int
		}
		Alerts struct {
			Fatal, Critical, Warning int
			Worst                    *string
		}
		Maintainers []struct {
			ID, Name string
			Group    bool
		}
	}
	UsedUnits, FreeUnits int
}

func TestRackElevation(t *testing.T) {
	env := newEnv(t)
	r := buildSmallRack(t, env.Client)
	var out struct{ RackElevation gqlElevation }
	env.MustDo(t, elevationQuery, map[string]any{"id": r.rack.ID}, &out)
	el := out.RackElevation

	t.Run("rack", func(t *testing.T) {
		rk := el.Rack
		if rk.ID != gqltest.ID(r.rack.ID) || rk.Name != "rack-3-7" || rk.Row != "3" || rk.Position != 7 || rk.Height != 12 || rk.Status != "ACTIVE" {
			t.Errorf("rack = %+v", rk)
		}
		if rk.FloorID != gqltest.ID(r.floor.ID) || rk.FloorName != "floor-1-2-3" || rk.DatacenterID != gqltest.ID(r.dc.ID) || rk.DatacenterName != r.dc.Name {
			t.Errorf("rack location = %+v", rk)
		}
		if deref(rk.PowerZone) != r.powerZone || deref(rk.NetworkZone) != r.netZone || deref(rk.RackZone) != r.rackZn {
			t.Errorf("zones = %v %v %v, want %s %s %s", deref(rk.PowerZone), deref(rk.NetworkZone), deref(rk.RackZone), r.powerZone, r.netZone, r.rackZn)
		}
	})

	t.Run("units top down, both faces, empty units explicit", func(t *testing.T) {
		id := func(h *ent.Host) string { return gqltest.ID(h.ID) }
		want := map[int][2]string{
			10: {id(r.srv3), id(r.srv3)},
			8:  {id(r.srv2), id(r.srv2)},
			5:  {id(r.sw), id(r.pdu)},
			2:  {id(r.srv1), id(r.srv1)},
			1:  {id(r.srv1), id(r.srv1)},
		}
		if len(el.Units) != 12 {
			t.Fatalf("%d units, want 12", len(el.Units))
		}
		for i, u := range el.Units {
			if u.Unit != 12-i {
				t.Errorf("units[%d] is U%d, want U%d (top down)", i, u.Unit, 12-i)
			}
			got := [2]string{deref(u.FrontDeviceID), deref(u.RearDeviceID)}
			if got != want[u.Unit] {
				t.Errorf("U%d front/rear = %q, want %q", u.Unit, got, want[u.Unit])
			}
		}
		if el.UsedUnits != 5 || el.FreeUnits != 7 {
			t.Errorf("used/free = %d/%d, want 5/7", el.UsedUnits, el.FreeUnits)
		}
	})

	t.Run("devices", func(t *testing.T) {
		var names []string
		for _, d := range el.Devices {
			names = append(names, d.Name)
		}
		p := r.p
		wantOrder := []string{p + "srv3", p + "srv2", p + "sw", p + "pdu", p + "srv1"}
		if fmt.Sprint(names) != fmt.Sprint(wantOrder) {
			t.Fatalf("devices %v, want %v (top down, front before rear)", names, wantOrder)
		}
		srv3, srv2, sw, pdu, srv1 := el.Devices[0], el.Devices[1], el.Devices[2], el.Devices[3], el.Devices[4]
		if srv1.Kind != "SERVER" || srv1.Position != 1 || srv1.Height != 2 || !srv1.FullDepth || srv1.Model != "M-srv1" || srv1.Lifecycle != "ACTIVE" {
			t.Errorf("srv1 = %+v", srv1)
		}
		if n := srv1.Node; n == nil || n.Status != "READY" || n.Cordoned || n.CPUCapacity != 64 || n.CPUAllocated != 8 ||
			n.MemoryCapacityMB != 262144 || n.MemoryAllocatedMB != 16384 || n.VMCount != 2 || n.Name != r.p+"node1" {
			t.Errorf("srv1 node = %+v, want READY 8/64 vCPU 16384/262144 MB 2 VMs (the deleted one not counted)", n)
		}
		if a := srv1.Alerts; a.Fatal != 0 || a.Critical != 1 || a.Warning != 2 || deref(a.Worst) != "CRITICAL" {
			t.Errorf("srv1 alerts = %+v, want 0 fatal, 1 critical, 2 warning (host and node, closed not counted), worst CRITICAL", a)
		}
		if got := fmt.Sprint(srv1.Maintainers); got != fmt.Sprintf("[{%d Alice false} {%d %steam true}]", r.maintainer.ID, r.team.ID, r.p) {
			t.Errorf("srv1 maintainers = %s", got)
		}
		if n := srv2.Node; n == nil || n.Status != "DOWN" || !n.Cordoned || n.VMCount != 0 {
			t.Errorf("srv2 node = %+v, want DOWN, cordoned, no VMs", n)
		}
		if a := srv2.Alerts; a.Fatal != 1 || deref(a.Worst) != "FATAL" {
			t.Errorf("srv2 alerts = %+v, want the node's fatal alert", a)
		}
		if srv3.Node != nil || srv3.Lifecycle != "PLANNED" || srv3.Alerts.Worst != nil || len(srv3.Maintainers) != 0 {
			t.Errorf("srv3 = %+v, want no node, PLANNED, no alerts, no maintainers", srv3)
		}
		if sw.Kind != "SWITCH" || deref(sw.Role) != "RACK_LEAF" || sw.FullDepth || sw.Face != "FRONT" || sw.Node != nil {
			t.Errorf("sw = %+v", sw)
		}
		if pdu.Kind != "PDU" || pdu.Role != nil || pdu.FullDepth || pdu.Face != "REAR" {
			t.Errorf("pdu = %+v", pdu)
		}
	})
}

func TestRackElevationErrors(t *testing.T) {
	env := newEnv(t)
	r := buildSmallRack(t, env.Client)
	tests := []struct {
		name string
		id   any
		code string
	}{
		{"rack that does not exist", r.rack.ID + 100000, "NOT_FOUND"},
		{"id of another type", r.floor.ID, "NOT_FOUND"},
		{"id in no type's range", 1 << 50, "NOT_FOUND"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := env.Do(t, elevationQuery, map[string]any{"id": tt.id})
			res.ExpectError(t, tt.code, "")
			if string(res.Data) != "null" {
				t.Errorf("data = %s, want null", res.Data)
			}
		})
	}
	t.Run("not a number", func(t *testing.T) {
		res := env.Do(t, elevationQuery, map[string]any{"id": "rack-3-7"})
		if len(res.Errors) == 0 {
			t.Fatalf("no error for a non-numeric id: %s", res.Data)
		}
	})
	t.Run("without a token", func(t *testing.T) {
		env.As("").Do(t, elevationQuery, map[string]any{"id": r.rack.ID}).ExpectError(t, "UNAUTHENTICATED", "")
	})
}

// tenantToken makes a user who is a member of tenant and returns a token of theirs.
func tenantToken(t *testing.T, env *gqltest.Env, tenant *ent.Tenant) string {
	t.Helper()
	var u struct{ CreateUser struct{ ID string } }
	env.MustDo(t, `mutation($in: CreateUserInput!) { createUser(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"username": prefix("member") + "x"}}, &u)
	env.MustDo(t, `mutation($in: GrantRoleInput!) { grantRole(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"userID": u.CreateUser.ID, "role": "TENANT_MEMBER", "tenantID": tenant.ID}}, nil)
	var tok struct{ CreateAPIToken struct{ Token string } }
	env.MustDo(t, `mutation($in: CreateAPITokenInput!) { createAPIToken(input: $in) { token } }`,
		map[string]any{"in": map[string]any{"name": "member", "userID": u.CreateUser.ID}}, &tok)
	return tok.CreateAPIToken.Token
}

func TestTenantMemberSeesNoRacks(t *testing.T) {
	env := newEnv(t)
	r := buildSmallRack(t, env.Client)
	member := env.As(tenantToken(t, env, r.tenant))
	for _, q := range []struct{ name, query string }{
		{"rackElevation", elevationQuery},
		{"floorView", `query($id: ID!) { floorView(id: $id) { id racks { rack { name } } } }`},
		{"datacenterView", `query($id: ID!) { datacenterView(id: $id) { id } }`},
		{"clusterView", `query($id: ID!) { clusterView(id: $id) { cluster { name } } }`},
	} {
		t.Run(q.name, func(t *testing.T) {
			id := map[string]int{"rackElevation": r.rack.ID, "floorView": r.floor.ID, "datacenterView": r.dc.ID, "clusterView": r.cluster.ID}[q.name]
			res := member.Do(t, q.query, map[string]any{"id": id})
			e := res.ExpectError(t, "NOT_FOUND", "")
			if string(res.Data) != "null" {
				t.Errorf("data = %s, want null", res.Data)
			}
			// The answer is the one for a record that does not exist: nothing tells the member
			// the rack is there.
			missing := member.Do(t, q.query, map[string]any{"id": id + 100000})
			if len(missing.Errors) == 0 || missing.Errors[0].Code() != e.Code() {
				t.Errorf("a missing record answers %s, a hidden one %s", missing.ErrorsString(), res.ErrorsString())
			}
		})
	}
	// The admin sees the same rack.
	env.MustDo(t, elevationQuery, map[string]any{"id": r.rack.ID}, nil)
}

func TestFloorAndDatacenterViews(t *testing.T) {
	env := newEnv(t)
	r := buildSmallRack(t, env.Client)
	ctx := gqltest.System()
	// A second, empty rack on the same floor, ahead of rack-3-7 in row order.
	empty := env.Client.Rack.Create().SetName("rack-3-2").SetRow("3").SetPosition(2).SetHeight(42).SetFloor(r.floor).SaveX(ctx)

	var fv struct {
		FloorView struct {
			ID, Name, DatacenterID, DatacenterName string
			Racks                                  []struct {
				Rack                        struct{ ID, Name string }
				UsedUnits, FreeUnits, Hosts int
				Capacity                    map[string]int
				Alerts                      struct {
					Fatal, Critical, Warning int
					Worst                    *string
				}
			}
		}
	}
	env.MustDo(t, `query($id: ID!) { floorView(id: $id) { id name datacenterID datacenterName
	  racks { rack { id name } usedUnits freeUnits hosts
	    capacity { nodes readyNodes cpuCapacity cpuAllocated memoryCapacityMB memoryAllocatedMB diskCapacityGB diskAllocatedGB }
	    alerts { fatal critical warning worst } } } }`, map[string]any{"id": r.floor.ID}, &fv)
	f := fv.FloorView
	if f.Name != "floor-1-2-3" || f.DatacenterID != gqltest.ID(r.dc.ID) || f.DatacenterName != r.dc.Name {
		t.Errorf("floor = %+v", f)
	}
	if len(f.Racks) != 2 || f.Racks[0].Rack.ID != gqltest.ID(empty.ID) || f.Racks[1].Rack.ID != gqltest.ID(r.rack.ID) {
		t.Fatalf("racks = %+v, want rack-3-2 then rack-3-7", f.Racks)
	}
	if e := f.Racks[0]; e.UsedUnits != 0 || e.FreeUnits != 42 || e.Hosts != 0 || e.Capacity["nodes"] != 0 || e.Alerts.Worst != nil {
		t.Errorf("empty rack = %+v", e)
	}
	full := f.Racks[1]
	if full.UsedUnits != 5 || full.FreeUnits != 7 || full.Hosts != 5 {
		t.Errorf("rack-3-7 occupancy = %d used, %d free, %d hosts; want 5, 7, 5", full.UsedUnits, full.FreeUnits, full.Hosts)
	}
	wantCap := map[string]int{"nodes": 2, "readyNodes": 1, "cpuCapacity": 96, "cpuAllocated": 8, "memoryCapacityMB": 393216,
		"memoryAllocatedMB": 16384, "diskCapacityGB": 1000, "diskAllocatedGB": 80}
	if fmt.Sprint(full.Capacity) != fmt.Sprint(wantCap) {
		t.Errorf("capacity = %v, want %v", full.Capacity, wantCap)
	}
	if a := full.Alerts; a.Fatal != 1 || a.Critical != 1 || a.Warning != 2 || deref(a.Worst) != "FATAL" {
		t.Errorf("alerts = %+v, want 1 fatal, 1 critical, 2 warning, worst FATAL", a)
	}

	var dv struct {
		DatacenterView struct {
			ID, Name   string
			RegionName *string
			Floors     []struct {
				Name                                string
				Racks, UsedUnits, TotalUnits, Hosts int
				Capacity                            struct{ Nodes, ReadyNodes, CPUCapacity int }
				Alerts                              struct{ Worst *string }
			}
			Clusters []struct {
				Name     string
				VMCount  int
				Capacity struct{ Nodes, CPUCapacity, CPUAllocated int }
			}
		}
	}
	env.MustDo(t, `query($id: ID!) { datacenterView(id: $id) { id name regionName
	  floors { name racks usedUnits totalUnits hosts capacity { nodes readyNodes cpuCapacity } alerts { worst } }
	  clusters { name vmCount capacity { nodes cpuCapacity cpuAllocated } } } }`, map[string]any{"id": r.dc.ID}, &dv)
	d := dv.DatacenterView
	if deref(d.RegionName) != r.p+"region" || len(d.Floors) != 1 || len(d.Clusters) != 1 {
		t.Fatalf("datacenter = %+v", d)
	}
	if fl := d.Floors[0]; fl.Racks != 2 || fl.UsedUnits != 5 || fl.TotalUnits != 54 || fl.Hosts != 5 ||
		fl.Capacity.Nodes != 2 || fl.Capacity.ReadyNodes != 1 || fl.Capacity.CPUCapacity != 96 || deref(fl.Alerts.Worst) != "FATAL" {
		t.Errorf("floor summary = %+v", fl)
	}
	if cl := d.Clusters[0]; cl.Name != r.p+"cluster" || cl.VMCount != 2 || cl.Capacity.Nodes != 2 || cl.Capacity.CPUCapacity != 96 || cl.Capacity.CPUAllocated != 8 {
		t.Errorf("cluster summary = %+v, want 2 VMs (the deleted one not counted), 2 nodes, 96 vCPU", cl)
	}

	for _, q := range []string{
		`query($id: ID!) { floorView(id: $id) { id } }`,
		`query($id: ID!) { datacenterView(id: $id) { id } }`,
	} {
		env.Do(t, q, map[string]any{"id": r.rack.ID}).ExpectError(t, "NOT_FOUND", "")
	}
}

func TestClusterView(t *testing.T) {
	env := newEnv(t)
	r := buildSmallRack(t, env.Client)
	var out struct {
		ClusterView struct {
			Cluster struct {
				Name    string
				VMCount int
			}
			Nodes []struct {
				Node struct {
					Name, Status string
					VMCount      int
					Cordoned     bool
				}
				HostID, HostName string
				RackID, RackName *string
				VMs              []struct {
					Name, Status, TenantName, FlavorName, TenantID string
					Vcpus, MemoryMB                                int
				}
			}
		}
	}
	env.MustDo(t, `query($id: ID!) { clusterView(id: $id) { cluster { name vmCount }
	  nodes { node { name status vmCount cordoned } hostID hostName rackID rackName
	    vms { name status tenantID tenantName flavorName vcpus memoryMB } } } }`, map[string]any{"id": r.cluster.ID}, &out)
	v := out.ClusterView
	if v.Cluster.Name != r.p+"cluster" || v.Cluster.VMCount != 2 || len(v.Nodes) != 2 {
		t.Fatalf("cluster view = %+v", v)
	}
	n1, n2 := v.Nodes[0], v.Nodes[1]
	if n1.HostName != r.p+"srv1" || n1.HostID != gqltest.ID(r.srv1.ID) || deref(n1.RackName) != "rack-3-7" || deref(n1.RackID) != gqltest.ID(r.rack.ID) {
		t.Errorf("node 1 location = %+v", n1)
	}
	if n1.Node.Name != r.p+"node1" || n1.Node.VMCount != 2 || len(n1.VMs) != 2 {
		t.Fatalf("node 1 = %+v, want its 2 VMs that are not deleted", n1)
	}
	vm := n1.VMs[0]
	if vm.Name != r.p+"vm1" || vm.Status != "ACTIVE" || vm.TenantName != r.p+"acme" || vm.TenantID != gqltest.ID(r.tenant.ID) ||
		vm.FlavorName != r.p+"m1" || vm.Vcpus != 4 || vm.MemoryMB != 8192 {
		t.Errorf("vm1 = %+v", vm)
	}
	if n1.VMs[1].Name != r.p+"vm2" || n1.VMs[1].Status != "STOPPED" {
		t.Errorf("vm2 = %+v", n1.VMs[1])
	}
	if n2.HostName != r.p+"srv2" || n2.Node.Status != "DOWN" || !n2.Node.Cordoned || len(n2.VMs) != 0 {
		t.Errorf("node 2 = %+v", n2)
	}
	env.Do(t, `query($id: ID!) { clusterView(id: $id) { cluster { name } } }`, map[string]any{"id": r.floor.ID}).ExpectError(t, "NOT_FOUND", "")
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
