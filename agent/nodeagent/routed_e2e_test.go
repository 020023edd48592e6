package nodeagent_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/virtflow/virtflow/agent/bgp/bgptest"
	"github.com/virtflow/virtflow/agent/nodeagent"
	"github.com/virtflow/virtflow/agent/vmnet"
	"github.com/virtflow/virtflow/clients/cli"
	"github.com/virtflow/virtflow/demo/fleet"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/ent/ipaddress"
	"github.com/virtflow/virtflow/ent/port"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/netlab"
)

// routedNode is one node of the routed test: its namespace (uplink 10.90.0.x on the leaf's
// segment), its VM-address namespaces and its agent, run in-process with netlink bound to
// the node's namespace and a BGP speaker running in that namespace (bgptest).
type routedNode struct {
	ns   *netlab.NS
	addr netip.Addr
	vm   *vmnet.Manager
	stop func()
}

// TestRoutedAddressEndToEnd is issue 27's routed VM address on real parts: PostgreSQL,
// Redis, the server and worker, the agents of two nodes (libvirtd's test driver), BIRD as
// the rack-leaf router in a namespace of its own, and a client namespace behind the router.
// Each node's BGP peers come from the graph (its host cabled to the leaf, whose record
// carries bgpAsn and bgpAddress). A VM with an address of a routed network: the leaf learns
// the /32 from node 0, the client reaches the guest (a namespace with an HTTP server on the
// VM's tap) through the leaf, the guest reaches the metadata service on 169.254.1.2 as
// itself, the VM's routes read announced by node 0, an ACL allows port 8080 only; stopping
// the VM withdraws the /32 within one second; starting it announces it again; draining node
// 0 moves the VM and its /32 to node 1.
func TestRoutedAddressEndToEnd(t *testing.T) {
	netlab.Require(t)
	st := startFleet(t, 2)
	ctx, c := gqltest.System(), st.env.Client
	api := &nodeagent.Client{URL: st.base, Token: gqltest.AdminToken}

	// The fabric: one leaf (BIRD, AS 65000) on a segment with both nodes, a client behind it.
	leaf := netlab.NewNS(t, "leaf")
	leafAddr := netip.MustParseAddr("10.90.0.1")
	leaf.IP(t, "link", "add", "br0", "type", "bridge")
	leaf.IP(t, "addr", "add", "10.90.0.1/24", "dev", "br0")
	leaf.IP(t, "link", "set", "br0", "up")
	leaf.Sysctl(t, "net.ipv4.ip_forward", "1")
	client := netlab.NewNS(t, "client")
	netlab.Link(t, leaf, "cl0", netip.MustParsePrefix("10.91.0.1/30"), client, "eth0", netip.MustParsePrefix("10.91.0.2/30"))
	client.Route(t, netip.MustParsePrefix("0.0.0.0/0"), netip.MustParseAddr("10.91.0.1"))

	leafHost := c.Host.Create().SetName(st.site.Prefix + "-rack-leaf-router01").SetKind(host.KindRouter).SetRole(host.RoleRackLeaf).
		SetBgpAsn(65000).SetBgpAddress(leafAddr.String()).SaveX(ctx)
	var neighbors []netlab.BIRDNeighbor
	nodes := make([]*routedNode, 2)
	for i := range nodes {
		n := &routedNode{ns: netlab.NewNS(t, fmt.Sprintf("node%d", i)), addr: netip.AddrFrom4([4]byte{10, 90, 0, byte(2 + i)})}
		netlab.Link(t, n.ns, "eth0", netip.PrefixFrom(n.addr, 24), leaf, fmt.Sprintf("n%d", i), netip.Prefix{})
		leaf.IP(t, "link", "set", fmt.Sprintf("n%d", i), "master", "br0")
		n.ns.Route(t, netip.MustParsePrefix("0.0.0.0/0"), leafAddr)
		// The graph: the node's host with its ASN and address, cabled to the leaf.
		h := c.Host.UpdateOneID(st.site.Nodes[i].HostID).SetBgpAsn(int64(65101 + i)).SetBgpAddress(n.addr.String()).SaveX(ctx)
		hp := c.Port.Create().SetName("eth0").SetHostID(h.ID).SaveX(ctx)
		lp := c.Port.Create().SetName(fmt.Sprintf("swp%d", i+1)).SetHostID(leafHost.ID).SaveX(ctx)
		c.Link.Create().SetAPortID(hp.ID).SetBPortID(lp.ID).ExecX(ctx)
		neighbors = append(neighbors, netlab.BIRDNeighbor{Address: n.addr, ASN: uint32(65101 + i), Passive: true})
		nodes[i] = n
	}
	bird := netlab.StartBIRD(t, leaf, netlab.BIRDConfig{RouterID: leafAddr, ASN: 65000, Neighbors: neighbors})
	for i, n := range nodes {
		n.stop = startRoutedAgent(t, st, i, n)
	}

	// A routed network and a VM on node 0 (node 1 unschedulable meanwhile).
	nw := c.Network.Create().SetName(st.site.Prefix + "-routed").SetCidr("10.123.0.0/24").SetVrf(st.site.Prefix).
		SetGateway("10.123.0.1").SetDatacenterID(st.site.Datacenter).SaveX(ctx)
	n0, n1 := st.site.Nodes[0].ID, st.site.Nodes[1].ID
	c.ComputeNode.UpdateOneID(n1).SetSchedulable(false).ExecX(ctx)
	var created struct{ CreateVirtualMachine struct{ ID string } }
	if err := api.Do(ctx, `mutation($in: CreateVirtualMachineInput!) { createVirtualMachine(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"name": "routed-1", "tenantID": gqltest.ID(st.site.Tenant), "regionID": gqltest.ID(st.site.Region),
			"flavorID": gqltest.ID(st.flavor.ID), "networkIDs": []string{gqltest.ID(nw.ID)}}}, &created); err != nil {
		t.Fatal(err)
	}
	vmID := mustInt(t, created.CreateVirtualMachine.ID)
	var addr netip.Addr
	eventuallyWithin(t, 30*time.Second, "the VM's address", func() bool {
		ip, err := c.IPAddress.Query().Where(ipaddress.HasPortWith(port.HasVirtualMachineWith(virtualmachine.ID(vmID)))).Only(ctx)
		if err == nil {
			addr = netip.MustParseAddr(ip.Address)
		}
		return err == nil
	})
	vm32 := netip.PrefixFrom(addr, 32)
	// The guest: its NIC's tap (slot 0 of node 0) made as libvirt would, before the domain runs.
	guest0 := newRoutedGuest(t, nodes[0], addr, "guest-node0")
	eventuallyWithin(t, 60*time.Second, "VM ACTIVE on node 0", func() bool {
		if vm, err := c.VirtualMachine.Get(ctx, vmID); err == nil && vm.Status == virtualmachine.StatusError {
			t.Fatalf("VM in ERROR: %s", vm.StatusReason)
		}
		return c.VirtualMachine.Query().Where(virtualmachine.ID(vmID), virtualmachine.StatusEQ(virtualmachine.StatusActive),
			virtualmachine.HasNodeWith(computenode.ID(n0))).ExistX(ctx)
	})
	leaf.WaitRoute(t, vm32, nodes[0].addr, true, 10*time.Second)
	if body := httpGet(t, client, "http://"+addr.String()+":8080/", 2*time.Second); !strings.HasPrefix(body, "hello from guest-node0") {
		t.Fatalf("client through the leaf: %q", body)
	}
	// The metadata service answers the guest as itself.
	if body := httpGet(t, guest0, "http://169.254.1.2/latest/meta-data/instance-id", 2*time.Second); strings.TrimSpace(body) != created.CreateVirtualMachine.ID {
		t.Errorf("metadata instance-id: %q, want %s", body, created.CreateVirtualMachine.ID)
	}
	var routes struct {
		VMRoutes []struct {
			VirtualMachine struct{ ID string }
			Route          struct {
				Address, Node, Namespace, LinkAddress string
				Announced                             bool
			}
		}
	}
	eventuallyWithin(t, 10*time.Second, "vmRoutes shows node 0 announcing", func() bool {
		err := api.Do(ctx, `{ vmRoutes { virtualMachine { id } route { address node namespace linkAddress announced } } }`, nil, &routes)
		// The database may hold earlier runs' VMs (go test -count): only this VM's route counts.
		mine := 0
		for _, r := range routes.VMRoutes {
			if r.VirtualMachine.ID == created.CreateVirtualMachine.ID {
				mine++
				if !r.Route.Announced || r.Route.Node != st.site.Nodes[0].Name || r.Route.LinkAddress != "169.254.32.0" {
					return false
				}
			}
		}
		return err == nil && mine == 1
	})

	// The CLI lists the route: which node announces the address.
	var out, errOut strings.Builder
	if code := cli.Run(ctx, []string{"routes", "--endpoint", st.base, "--token", gqltest.AdminToken},
		cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }}); code != 0 ||
		!strings.Contains(out.String(), addr.String()) || !strings.Contains(out.String(), st.site.Nodes[0].Name) {
		t.Errorf("virtflow routes: exit %d\n%s%s", code, out.String(), errOut.String())
	}

	// An ACL: ingress TCP 8080 only. The change reaches the agent as assignmentChanged (its
	// periodic resync is 30 s here, longer than the wait).
	var rule struct{ CreateSecurityRule struct{ ID string } }
	if err := api.Do(ctx, `mutation($in: CreateSecurityRuleInput!) { createSecurityRule(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"direction": "INGRESS", "protocol": "TCP", "portFrom": 8080, "tenantID": gqltest.ID(st.site.Tenant),
			"virtualMachineID": created.CreateVirtualMachine.ID}}, &rule); err != nil {
		t.Fatal(err)
	}
	aclStart := time.Now()
	eventuallyWithin(t, 10*time.Second, "port 8081 dropped by the ACL", func() bool {
		_, err := tryGet(client, "http://"+addr.String()+":8081/", 300*time.Millisecond)
		return err != nil
	})
	aclApplied := time.Since(aclStart)
	if body := httpGet(t, client, "http://"+addr.String()+":8080/", 2*time.Second); !strings.HasPrefix(body, "hello") {
		t.Fatalf("allowed port 8080 after the ACL: %q", body)
	}

	// Stop: withdrawn within a second of the request.
	start := time.Now()
	if err := api.Do(ctx, `mutation($id: ID!) { stopVirtualMachine(id: $id) { id } }`, map[string]any{"id": created.CreateVirtualMachine.ID}, nil); err != nil {
		t.Fatal(err)
	}
	leaf.WaitRoute(t, vm32, netip.Addr{}, false, 5*time.Second)
	withdraw := time.Since(start)
	if withdraw > time.Second {
		t.Errorf("the /32 was withdrawn %v after stopVirtualMachine, want within 1 s", withdraw)
	}
	eventuallyWithin(t, 30*time.Second, "VM STOPPED", func() bool {
		return c.VirtualMachine.Query().Where(virtualmachine.ID(vmID), virtualmachine.StatusEQ(virtualmachine.StatusStopped)).ExistX(ctx)
	})
	// Start: the domain's new tap (the namespace went with the stop), then announced again.
	reattachTap(t, nodes[0], guest0, addr)
	start = time.Now()
	if err := api.Do(ctx, `mutation($id: ID!) { startVirtualMachine(id: $id) { id } }`, map[string]any{"id": created.CreateVirtualMachine.ID}, nil); err != nil {
		t.Fatal(err)
	}
	leaf.WaitRoute(t, vm32, nodes[0].addr, true, 5*time.Second)
	announce := time.Since(start)
	if announce > time.Second {
		t.Errorf("the /32 was announced %v after startVirtualMachine, want within 1 s", announce)
	}

	// Drain node 0: the VM moves to node 1 and its /32 follows.
	newRoutedGuest(t, nodes[1], addr, "guest-node1")
	c.ComputeNode.UpdateOneID(n1).SetSchedulable(true).ExecX(ctx)
	start = time.Now()
	if err := api.Do(ctx, `mutation($id: ID!) { drainNode(id: $id) { moving { id } } }`, map[string]any{"id": gqltest.ID(n0)}, nil); err != nil {
		t.Fatal(err)
	}
	leaf.WaitRoute(t, vm32, nodes[1].addr, true, 60*time.Second)
	moved := time.Since(start)
	eventuallyWithin(t, 10*time.Second, "the client reaches the VM on node 1", func() bool {
		body, err := tryGet(client, "http://"+addr.String()+":8080/", time.Second)
		return err == nil && strings.HasPrefix(body, "hello from guest-node1")
	})
	if _, gws, _ := leaf.HasRoute(vm32); len(gws) != 1 {
		t.Errorf("after the move the leaf routes %v via %v, want node 1 only", vm32, gws)
	}
	t.Logf("announce/withdraw latency (request to the leaf's kernel table): withdraw on stop %v, announce on start %v; drain moved the /32 in %v; ACL in force %v after createSecurityRule (first refused probe)", withdraw, announce, moved, aclApplied)
	t.Logf("leaf routes:\n%s", bird.Show(t, "route"))
}

// startRoutedAgent runs node i's agent in routed mode: vmnet on the node's namespace, the
// metadata service on a listener in it, and a BGP speaker in it with the configuration the
// agent reads from the graph (its host's ASN and address, the leaf it is cabled to).
//
// Each option changes the agent's configuration (the traffic test adds load balancers).
func startRoutedAgent(t *testing.T, st *fleetStack, i int, n *routedNode, options ...func(*nodeagent.Config)) (stop func()) {
	t.Helper()
	tok, err := fleet.IssueAgentToken(gqltest.System(), st.env.Client, st.env.Identity, st.site.Nodes[i].ID)
	if err != nil {
		t.Fatal(err)
	}
	m, err := vmnet.New(vmnet.Config{HostNS: n.ns.Fd(), NSPrefix: n.ns.Name + "-"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if ats, err := m.List(); err == nil {
			for _, at := range ats {
				_ = m.Remove(at.Addr)
			}
		}
		m.Close()
	})
	n.vm = m
	if err := m.Setup(); err != nil {
		t.Fatal(err)
	}
	md, err := n.ns.Listen("tcp", "169.254.1.2:80")
	if err != nil {
		t.Fatal(err)
	}
	cfg := nodeagent.Config{APIURL: st.base, Token: tok, NodeID: gqltest.ID(st.site.Nodes[i].ID), Hypervisor: st.hvs[i],
		Log:               slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("node", i),
		HeartbeatInterval: time.Second, ResyncInterval: 30 * time.Second, RetryDelay: 10 * time.Millisecond,
		NetworkMode: nodeagent.NetworkRouted, Routed: m, MetadataListener: md}
	for _, o := range options {
		o(&cfg)
	}
	probe, err := nodeagent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := probe.SpeakerConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if sc.ASN != uint32(65101+i) || sc.RouterID != n.addr || len(sc.Peers) != 1 || sc.Peers[0].Address != netip.MustParseAddr("10.90.0.1") || sc.Peers[0].ASN != 65000 {
		t.Fatalf("node %d's BGP configuration from the graph: %+v", i, sc)
	}
	speaker := bgptest.Start(t, n.ns, sc)
	if err := speaker.WaitEstablished(); err != nil {
		t.Fatal(err)
	}
	cfg.BGP.Speaker = speaker
	ag, err := nodeagent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(st.runCtx)
	done := make(chan struct{})
	go func() { defer close(done); _ = ag.Run(ctx) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// newRoutedGuest plays a VM on node n: a namespace whose eth0 (address a/32, default route
// via 169.254.1.1) is the peer of the tap vft0 the hypervisor would make in the node's
// namespace, with HTTP servers on ports 8080 and 8081 answering "hello from <name>".
func newRoutedGuest(t *testing.T, n *routedNode, a netip.Addr, name string) *netlab.NS {
	t.Helper()
	g := netlab.NewNS(t, "guest")
	reattachTap(t, n, g, a)
	for _, p := range []string{"8080", "8081"} {
		l, err := g.Listen("tcp", "0.0.0.0:"+p)
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "hello from %s", name)
		}), ReadHeaderTimeout: time.Second}
		go func() { _ = srv.Serve(l) }()
		t.Cleanup(func() { _ = srv.Close() })
	}
	return g
}

// reattachTap (re)creates the guest's NIC: tap vft0 in the node's namespace, eth0 in g.
func reattachTap(t *testing.T, n *routedNode, g *netlab.NS, a netip.Addr) {
	t.Helper()
	if _, err := n.ns.Handle.LinkByName("vft0"); err == nil {
		return
	}
	if _, err := g.Handle.LinkByName("eth0"); err == nil {
		g.IP(t, "link", "del", "eth0")
	}
	netlab.Link(t, n.ns, "vft0", netip.Prefix{}, g, "eth0", netip.PrefixFrom(a, 32))
	g.IP(t, "route", "replace", "default", "via", vmnet.Gateway.String(), "dev", "eth0", "onlink")
}

func tryGet(ns *netlab.NS, url string, timeout time.Duration) (string, error) {
	hc := &http.Client{Timeout: timeout, Transport: &http.Transport{DialContext: ns.DialContext, DisableKeepAlives: true}}
	res, err := hc.Get(url)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return string(b), err
}

func httpGet(t *testing.T, ns *netlab.NS, url string, timeout time.Duration) string {
	t.Helper()
	body, err := tryGet(ns, url, timeout)
	if err != nil {
		t.Fatalf("GET %s from %s: %v", url, ns.Name, err)
	}
	return body
}
