package traffic

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/controllers/gslb"
	"github.com/virtflow/virtflow/controllers/kubecluster"
	"github.com/virtflow/virtflow/domain/egress"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/globalservice"
	"github.com/virtflow/virtflow/ent/loadbalancer"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

func openClient(t *testing.T) *ent.Client {
	t.Helper()
	db, err := infra.OpenDatabase(context.Background(), testdb.DSN(t), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db.Client
}

// fixture is a region service with 3 replicas (one address each) and a load balancer with a
// VIP and one TCP listener, on a site of 2 racks with 2 nodes each.
type fixture struct {
	c    *ent.Client
	site *placementtest.Site
	svc  *ent.RegionService
	lb   *ent.LoadBalancer
	vms  []int
}

func newFixture(t *testing.T, c *ent.Client, vip string) *fixture {
	t.Helper()
	ctx := placementtest.Ctx()
	site, err := placementtest.Build(ctx, c, placementtest.Spec{Racks: 2, HostsPerRack: 2, CPU: 16, MemoryMB: 65536,
		DiskGB: 1000, Cores: 8, Providers: true})
	if err != nil {
		t.Fatal(err)
	}
	p := site.Prefix
	flavor := c.Flavor.Create().SetName(p + "-f").SetVcpus(1).SetMemoryMB(512).SetProviderID(site.Provider).SaveX(ctx)
	svc := c.RegionService.Create().SetName(p + "-web").SetTenantID(site.Tenant).SetRegionID(site.Region).SetReplicas(3).SaveX(ctx)
	net := c.Network.Create().SetName(p + "-vms").SetCidr("172.16.0.0/24").SetVrf(p).SetTenantID(site.Tenant).SaveX(ctx)
	vipAddr := netip.MustParseAddr(vip)
	svcNet := c.Network.Create().SetName(p + "-svc").SetCidr(netip.PrefixFrom(vipAddr, 24).Masked().String()).SetVrf(p).SaveX(ctx)
	f := &fixture{c: c, site: site, svc: svc}
	for i := range 3 {
		vm := c.VirtualMachine.Create().SetName(fmt.Sprintf("%s-web-%d", p, i+1)).SetTenantID(site.Tenant).SetRegionID(site.Region).
			SetFlavorID(flavor.ID).SetRegionServiceID(svc.ID).SaveX(ctx)
		pt := c.Port.Create().SetName("eth0").SetVirtualMachineID(vm.ID).SetNetworkID(net.ID).SaveX(ctx)
		c.IPAddress.Create().SetAddress(fmt.Sprintf("172.16.0.%d", 11+i)).SetNetworkID(net.ID).SetPortID(pt.ID).ExecX(ctx)
		f.vms = append(f.vms, vm.ID)
	}
	f.lb = c.LoadBalancer.Create().SetName(p + "-web").SetTenantID(site.Tenant).SetRegionServiceID(svc.ID).
		SetStatus(loadbalancer.StatusNotRealized).
		SetListeners([]fieldtype.LBListener{{Port: 80, Protocol: "TCP", TargetPort: 8080}}).SaveX(ctx)
	c.IPAddress.Create().SetAddress(vip).SetNetworkID(svcNet.ID).SetLoadBalancerID(f.lb.ID).ExecX(ctx)
	return f
}

func (f *fixture) reload(t *testing.T) *ent.LoadBalancer {
	t.Helper()
	return f.c.LoadBalancer.Query().Where(loadbalancer.ID(f.lb.ID)).WithNodes().OnlyX(placementtest.Ctx())
}

// agentCtx is the context of node id's agent.
func agentCtx(id int) context.Context {
	return authz.NewContext(context.Background(), &authz.Viewer{Name: "agent", Bindings: []authz.Binding{
		{Role: authz.RoleAgent, Domain: authz.NodeDomain(id)}}})
}

// TestLoadBalancerRealization checks that the loop chooses two nodes in different racks
// and lists the replicas as members, that the load balancer stays NOT_REALIZED until a
// node reports it announces and forwards, reads ACTIVE then with the reported member
// health, falls back when the report goes stale or says the proxy stopped, and that a node
// not chosen (or another node's agent) cannot report.
func TestLoadBalancerRealization(t *testing.T) {
	c := openClient(t)
	f := newFixture(t, c, "10.250.0.10")
	now := time.Now()
	cfg := Config{Clock: func() time.Time { return now }}
	loop := &Loop{Client: c, Config: cfg}
	if err := loop.Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	lb := f.reload(t)
	if len(lb.Edges.Nodes) != 2 {
		t.Fatalf("nodes chosen: %d, want 2", len(lb.Edges.Nodes))
	}
	racks := map[int]bool{}
	for _, n := range lb.Edges.Nodes {
		for _, sn := range f.site.Nodes {
			if sn.ID == n.ID {
				racks[sn.Rack] = true
			}
		}
	}
	if len(racks) != 2 {
		t.Errorf("load balancer nodes %v share a rack", lb.Edges.Nodes)
	}
	if len(lb.Members) != 3 || lb.Members[0].Address != "172.16.0.11" || lb.Members[0].Health != fieldtype.HealthUnknown {
		t.Fatalf("members %+v", lb.Members)
	}
	if lb.Status != loadbalancer.StatusNotRealized || !strings.Contains(lb.StatusReason, "no report yet") {
		t.Fatalf("before any report: %s %q", lb.Status, lb.StatusReason)
	}

	n1, n2 := lb.Edges.Nodes[0].ID, lb.Edges.Nodes[1].ID
	outsider := -1
	for _, sn := range f.site.Nodes {
		if sn.ID != n1 && sn.ID != n2 {
			outsider = sn.ID
		}
	}
	// A node not chosen, and another node's agent, are told the load balancer does not exist.
	for _, bad := range []struct {
		ctx  context.Context
		node int
	}{{agentCtx(outsider), outsider}, {agentCtx(n2), n1}} {
		_, err := ApplyNodeReport(bad.ctx, c, cfg, Report{LoadBalancerID: f.lb.ID, NodeID: bad.node, Announced: true, Forwarding: true})
		if err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("report of node %d: %v, want not found", bad.node, err)
		}
	}
	// A node that runs its proxy but whose members all fail: still NOT_REALIZED.
	got, err := ApplyNodeReport(agentCtx(n1), c, cfg, Report{LoadBalancerID: f.lb.ID, NodeID: n1,
		Reason: "no member passes its health check", Members: []MemberReport{{VMID: f.vms[0], Health: "DOWN", Reason: "L4CON"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != loadbalancer.StatusNotRealized || !strings.Contains(got.StatusReason, "no member passes") {
		t.Fatalf("nothing forwards: %s %q", got.Status, got.StatusReason)
	}
	got, err = ApplyNodeReport(agentCtx(n1), c, cfg, Report{LoadBalancerID: f.lb.ID, NodeID: n1, Announced: true, Forwarding: true,
		Members: []MemberReport{{VMID: f.vms[0], Health: "DOWN", Reason: "L4CON"}, {VMID: f.vms[1], Health: "UP"}, {VMID: f.vms[2], Health: "UP"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != loadbalancer.StatusActive || got.Members[0].Health != "DOWN" || got.Members[1].Health != "UP" {
		t.Fatalf("after a forwarding report: %s %q %+v", got.Status, got.StatusReason, got.Members)
	}
	if _, err := ApplyNodeReport(agentCtx(n1), c, cfg, Report{LoadBalancerID: f.lb.ID, NodeID: n1,
		Members: []MemberReport{{VMID: f.vms[0], Health: "SICK"}}}); err == nil {
		t.Error("health SICK accepted")
	}
	// The loop keeps ACTIVE while the report is fresh, and drops it once stale.
	if err := loop.Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	if lb := f.reload(t); lb.Status != loadbalancer.StatusActive || lb.Members[1].Health != "UP" {
		t.Fatalf("fresh report, loop ran: %s %+v", lb.Status, lb.Members)
	}
	now = now.Add(DefaultStale + time.Second)
	if err := loop.Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	if lb := f.reload(t); lb.Status != loadbalancer.StatusNotRealized || !strings.Contains(lb.StatusReason, "last report") {
		t.Fatalf("stale report: %s %q", lb.Status, lb.StatusReason)
	}
}

// fakePowerDNS is the part of PowerDNS's HTTP API the publisher uses, recording the A
// records of each name.
type fakePowerDNS struct {
	mu    sync.Mutex
	zones map[string]bool
	a     map[string][]string
}

// TestGlobalServiceGSLB checks that a GSLB global service answers with the VIP of its
// ACTIVE, reachable member only, reads ACTIVE while it answers, NOT_SERVED with the reason
// once no member is healthy, and that a detached member's VIP leaves the answer. The
// PowerDNS side is checked for real in nodeagent's TestTrafficRegionServiceThroughAgents; here its API is served by
// httptest so the loop's decisions can be read in the records pushed.
func TestGlobalServiceGSLB(t *testing.T) {
	c := openClient(t)
	a := newFixture(t, c, "127.0.0.1")
	b := newFixture(t, c, "127.0.1.1")
	// Region A's VIP accepts connections (a listener on 127.0.0.1); region B's (127.0.1.1,
	// local too, with no listener) is outside the egress policy the checks dial through, so
	// its check is refused by the policy before any packet leaves.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			conn.Close()
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port
	ctx := placementtest.Ctx()
	for _, f := range []*fixture{a, b} {
		c.LoadBalancer.UpdateOneID(f.lb.ID).SetListeners([]fieldtype.LBListener{{Port: port, Protocol: "TCP", TargetPort: 8080}}).
			SetStatus(loadbalancer.StatusActive).ExecX(ctx)
	}
	dns := &fakePowerDNS{zones: map[string]bool{}, a: map[string][]string{}}
	srv := httptest.NewServer(dns)
	defer srv.Close()
	gs := c.GlobalService.Create().SetName(a.site.Prefix+"-gs").SetTenantID(a.site.Tenant).SetFqdn("web.gslb.test").SetTTL(10).
		AddRegionServiceIDs(a.svc.ID, b.svc.ID).SaveX(ctx)
	now := time.Now()
	cfg := Config{Clock: func() time.Time { return now }, Stale: time.Hour,
		Publisher: &gslb.Publisher{DNS: &gslb.PowerDNS{BaseURL: srv.URL, APIKey: "k"}, Zone: "gslb.test", NameServer: "ns1.gslb.test",
			Checker: gslb.Checker{Dial: egress.MustParse("127.0.0.1").DialContext, Timeout: 500 * time.Millisecond}}}
	// Keep the load balancers ACTIVE through the loop: their nodes report forwarding.
	report := func(f *fixture) {
		t.Helper()
		lb := f.reload(t)
		for _, n := range lb.Edges.Nodes {
			if _, err := ApplyNodeReport(agentCtx(n.ID), c, cfg, Report{LoadBalancerID: f.lb.ID, NodeID: n.ID, Announced: true, Forwarding: true}); err != nil {
				t.Fatal(err)
			}
		}
	}
	loop := &Loop{Client: c, Config: cfg}
	if err := loop.Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	report(a)
	report(b)
	if err := loop.Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := c.GlobalService.GetX(ctx, gs.ID)
	if got.Status != globalservice.StatusActive || !slices.Equal(got.DNSAnswer, []string{"127.0.0.1"}) ||
		!strings.Contains(got.StatusReason, b.svc.Name) || !strings.Contains(got.StatusReason, "egress") {
		t.Fatalf("one region reachable: %s %v %q", got.Status, got.DNSAnswer, got.StatusReason)
	}
	if r := dns.records("web.gslb.test."); !slices.Equal(r, []string{"127.0.0.1"}) {
		t.Fatalf("PowerDNS records %v", r)
	}
	// Region closure: A detached; B unreachable: nothing to answer.
	c.GlobalService.UpdateOneID(gs.ID).RemoveRegionServiceIDs(a.svc.ID).ExecX(ctx)
	if err := loop.Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	got = c.GlobalService.GetX(ctx, gs.ID)
	if got.Status != globalservice.StatusNotServed || len(got.DNSAnswer) != 0 || len(dns.records("web.gslb.test.")) != 0 {
		t.Fatalf("after detaching the healthy region: %s %v %v", got.Status, got.DNSAnswer, dns.records("web.gslb.test."))
	}
}

func (d *fakePowerDNS) records(name string) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.a[name])
}

func (d *fakePowerDNS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if r.Header.Get("X-API-Key") != "k" {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	const base = "/api/v1/servers/localhost/zones"
	switch {
	case r.Method == http.MethodPost && r.URL.Path == base:
		d.zones["gslb.test."] = true
		w.WriteHeader(http.StatusCreated)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, base+"/"):
		if !d.zones[strings.TrimPrefix(r.URL.Path, base+"/")] {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusOK)
	case r.Method == http.MethodPatch:
		var body struct {
			RRSets []struct {
				Name, Type, ChangeType string
				Records                []struct{ Content string }
			}
		}
		if err := decodeJSON(r, &body); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		for _, rr := range body.RRSets {
			if rr.Type != "A" {
				continue
			}
			var vals []string
			for _, rec := range rr.Records {
				vals = append(vals, rec.Content)
			}
			if rr.ChangeType == "DELETE" {
				vals = nil
			}
			d.a[rr.Name] = vals
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

// TestConcurrentLoopsChooseOnce races several workers' loops over one new load balancer: the
// database's row lock lets one choice of nodes through, so it ends with exactly the nodes
// one loop chose (two), never the union of several choices.
func TestConcurrentLoopsChooseOnce(t *testing.T) {
	c := openClient(t)
	f := newFixture(t, c, "10.250.1.10")
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			loop := &Loop{Client: c}
			errs <- loop.Once(context.Background())
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil && !strings.Contains(err.Error(), "deadlock") && !strings.Contains(err.Error(), "could not serialize") {
			t.Error(err)
		}
	}
	if n := len(f.reload(t).Edges.Nodes); n != 2 {
		t.Fatalf("after 6 concurrent loops the load balancer has %d nodes, want 2", n)
	}
}

// TestKubernetesAPILoadBalancer: the loop realizes the load balancer of a Kubernetes
// cluster's API, which has no region service: it chooses its nodes in the cluster's region,
// in two racks, and makes the control planes (not the workers) its members; a control plane
// being removed leaves the members.
func TestKubernetesAPILoadBalancer(t *testing.T) {
	c := openClient(t)
	ctx := placementtest.Ctx()
	site, err := placementtest.Build(ctx, c, placementtest.Spec{Racks: 2, HostsPerRack: 2, CPU: 16, MemoryMB: 65536,
		DiskGB: 1000, Cores: 8, Providers: true})
	if err != nil {
		t.Fatal(err)
	}
	p := site.Prefix
	flavor := c.Flavor.Create().SetName(p + "-f").SetVcpus(1).SetMemoryMB(512).SetProviderID(site.Provider).SaveX(ctx)
	net := c.Network.Create().SetName(p + "-k8s").SetCidr("172.17.0.0/24").SetVrf(p).SetTenantID(site.Tenant).SaveX(ctx)
	svcNet := c.Network.Create().SetName(p + "-svc").SetCidr("10.250.9.0/24").SetVrf(p + "-svc").SaveX(ctx)
	var nodes []fieldtype.KubernetesNode
	for i, role := range []string{kubecluster.RoleControlPlane, kubecluster.RoleControlPlane, kubecluster.RoleWorker} {
		vm := c.VirtualMachine.Create().SetName(fmt.Sprintf("%s-k-%d", p, i)).SetTenantID(site.Tenant).SetRegionID(site.Region).
			SetFlavorID(flavor.ID).SaveX(ctx)
		pt := c.Port.Create().SetName("eth0").SetVirtualMachineID(vm.ID).SetNetworkID(net.ID).SaveX(ctx)
		c.IPAddress.Create().SetAddress(fmt.Sprintf("172.17.0.%d", 11+i)).SetNetworkID(net.ID).SetPortID(pt.ID).ExecX(ctx)
		nodes = append(nodes, fieldtype.KubernetesNode{Name: fmt.Sprintf("%s-k-%d", p, i), Role: role, Index: i, VMID: vm.ID,
			State: "READY", Version: "1.30.2"})
	}
	lb := c.LoadBalancer.Create().SetName(p + "-k-api").SetTenantID(site.Tenant).SetStatus(loadbalancer.StatusNotRealized).
		SetListeners([]fieldtype.LBListener{kubecluster.APIListener}).SaveX(ctx)
	c.IPAddress.Create().SetAddress("10.250.9.10").SetNetworkID(svcNet.ID).SetLoadBalancerID(lb.ID).ExecX(ctx)
	k := c.KubernetesCluster.Create().SetName(p + "-k").SetVersion("1.30.2").SetTenantID(site.Tenant).SetRegionID(site.Region).
		SetFlavorID(flavor.ID).SetAPILoadBalancerID(lb.ID).SetNodes(nodes).SaveX(ctx)

	loop := &Loop{Client: c, Config: Config{}}
	if err := loop.Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := c.LoadBalancer.Query().Where(loadbalancer.ID(lb.ID)).WithNodes().OnlyX(ctx)
	racks := map[int]bool{}
	for _, n := range got.Edges.Nodes {
		for _, sn := range site.Nodes {
			if sn.ID == n.ID {
				racks[sn.Rack] = true
			}
		}
	}
	if len(got.Edges.Nodes) != 2 || len(racks) != 2 {
		t.Fatalf("API load balancer nodes %v in racks %v: want 2 nodes in 2 racks of the cluster's region", got.Edges.Nodes, racks)
	}
	addrs := func(ms []fieldtype.LBMember) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.Address)
		}
		return out
	}
	if a := addrs(got.Members); !slices.Equal(a, []string{"172.17.0.11", "172.17.0.12"}) {
		t.Fatalf("API load balancer members %v, want the two control planes", a)
	}
	if got.Status != loadbalancer.StatusNotRealized || !strings.Contains(got.StatusReason, "no report yet") {
		t.Errorf("before any report: %s %q", got.Status, got.StatusReason)
	}
	// A scale-down removes control plane 1: it leaves the members.
	nodes[1].State = kubecluster.StateRemoving
	c.KubernetesCluster.UpdateOne(k).SetNodes(nodes).ExecX(ctx)
	if err := loop.Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	if a := addrs(c.LoadBalancer.GetX(ctx, lb.ID).Members); !slices.Equal(a, []string{"172.17.0.11"}) {
		t.Fatalf("after control plane 1 is removing: members %v", a)
	}
}

// TestGlobalServiceAnycast: the load balancers of an ANYCAST global service's members, in two
// regions, are handed one VIP (the first member's) to serve and announce; the service reads
// ACTIVE answering that VIP while a member forwards; a detached member's nodes are handed
// its own VIP again (they withdraw the shared one and the traffic moves to the other region).
func TestGlobalServiceAnycast(t *testing.T) {
	c := openClient(t)
	a := newFixture(t, c, "10.250.5.10")
	b := newFixture(t, c, "10.250.6.10")
	ctx := placementtest.Ctx()
	gs := c.GlobalService.Create().SetName(a.site.Prefix+"-any").SetTenantID(a.site.Tenant).SetMode(globalservice.ModeAnycast).
		AddRegionServiceIDs(a.svc.ID, b.svc.ID).SaveX(ctx)
	now := time.Now()
	cfg := Config{Clock: func() time.Time { return now }, Stale: time.Hour}
	loop := &Loop{Client: c, Config: cfg}
	if err := loop.Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	served := func(f *fixture) []string {
		t.Helper()
		var vips []string
		for _, n := range f.reload(t).Edges.Nodes {
			lbs, err := ForNode(agentCtx(n.ID), c, n.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, lb := range lbs {
				if lb.ID == f.lb.ID {
					vips = append(vips, lb.VIP)
				}
			}
		}
		return vips
	}
	if got := served(a); !slices.Equal(got, []string{"10.250.5.10", "10.250.5.10"}) {
		t.Fatalf("region A's nodes serve %v, want the shared VIP on both", got)
	}
	if got := served(b); !slices.Equal(got, []string{"10.250.5.10", "10.250.5.10"}) {
		t.Fatalf("region B's nodes serve %v, want the shared VIP 10.250.5.10 on both", got)
	}
	got := c.GlobalService.GetX(ctx, gs.ID)
	if got.Status != globalservice.StatusNotServed {
		t.Fatalf("before any node forwards: %s %v", got.Status, got.DNSAnswer)
	}
	// Region B's nodes report they announce and forward: the service is ACTIVE on the shared VIP.
	for _, n := range b.reload(t).Edges.Nodes {
		if _, err := ApplyNodeReport(agentCtx(n.ID), c, cfg, Report{LoadBalancerID: b.lb.ID, NodeID: n.ID, Announced: true, Forwarding: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := loop.Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	got = c.GlobalService.GetX(ctx, gs.ID)
	if got.Status != globalservice.StatusActive || !slices.Equal(got.DNSAnswer, []string{"10.250.5.10"}) ||
		!strings.Contains(got.StatusReason, a.svc.Name) {
		t.Fatalf("region B forwarding: %s %v %q", got.Status, got.DNSAnswer, got.StatusReason)
	}
	// Region closure: B detached, its nodes serve B's own VIP; A's keep the shared one.
	c.GlobalService.UpdateOneID(gs.ID).RemoveRegionServiceIDs(b.svc.ID).ExecX(ctx)
	if got := served(b); !slices.Equal(got, []string{"10.250.6.10", "10.250.6.10"}) {
		t.Fatalf("detached region B's nodes serve %v, want its own VIP", got)
	}
	if got := served(a); !slices.Equal(got, []string{"10.250.5.10", "10.250.5.10"}) {
		t.Fatalf("region A's nodes serve %v after B left, want the shared VIP", got)
	}
	if err := loop.Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := c.GlobalService.GetX(ctx, gs.ID); got.Status != globalservice.StatusNotServed {
		t.Fatalf("only region A (not forwarding) left: %s %v", got.Status, got.DNSAnswer)
	}
}
