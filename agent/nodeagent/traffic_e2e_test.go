package nodeagent_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/virtflow/virtflow/agent/lbnet"
	"github.com/virtflow/virtflow/agent/nodeagent"
	"github.com/virtflow/virtflow/agent/vmnet"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/ent/network"
	"github.com/virtflow/virtflow/ent/regionservice"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/internal/platform/config"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/netlab"
)

// pdnsSchema is the gsqlite3 schema Debian's pdns-backend-sqlite3 ships.
const pdnsSchema = "/usr/share/doc/pdns-backend-sqlite3/schema.sqlite3.sql"

// requireTrafficParts skips unless namespaces and the daemons of the traffic test exist,
// naming the missing one.
func requireTrafficParts(t *testing.T) {
	t.Helper()
	netlab.Require(t)
	for _, bin := range []struct{ name, pkg string }{{"bird", "bird2"}, {"birdc", "bird2"}, {"haproxy", "haproxy"},
		{"pdns_server", "pdns-server"}, {"sqlite3", "sqlite3"}} {
		if _, err := exec.LookPath(bin.name); err != nil {
			t.Skipf("needs %s (Debian %s): %v", bin.name, bin.pkg, err)
		}
	}
	if _, err := os.Stat(pdnsSchema); err != nil {
		t.Skipf("needs the gsqlite3 backend of PowerDNS (Debian pdns-backend-sqlite3): %v", err)
	}
}

// nsVIPs puts a load balancer's VIPs on the loopback of a node's namespace (what
// lbnet.LoopbackVIPs does in the agent's own namespace on a real node).
type nsVIPs struct{ h *netlink.Handle }

func (v nsVIPs) addr(vip netip.Addr) (netlink.Link, *netlink.Addr, error) {
	lo, err := v.h.LinkByName("lo")
	return lo, &netlink.Addr{IPNet: &net.IPNet{IP: vip.AsSlice(), Mask: net.CIDRMask(32, 32)}}, err
}

func (v nsVIPs) Add(vip netip.Addr) error {
	lo, a, err := v.addr(vip)
	if err != nil {
		return err
	}
	return v.h.AddrReplace(lo, a)
}

func (v nsVIPs) Remove(vip netip.Addr) error {
	lo, a, err := v.addr(vip)
	if err != nil {
		return err
	}
	if err := v.h.AddrDel(lo, a); err != nil && !errors.Is(err, syscall.EADDRNOTAVAIL) {
		return err
	}
	return nil
}

// guests plays the hypervisor and the guests of the routed test: for every VM address a
// node's agent reserved (vmnet.Ensure) whose tap does not exist yet, it makes the tap in the
// node's namespace with its peer eth0 in a guest namespace of its own, where an HTTP server
// on :8080 answers "hello from <VM address> to <client address>".
type guests struct {
	t       *testing.T
	nodes   []*routedNode
	mu      sync.Mutex
	servers map[netip.Addr][]*http.Server
	made    map[string]bool // node namespace + tap
}

// plumb makes the guests of the taps the agents are waiting for.
func (g *guests) plumb() {
	g.t.Helper()
	for _, n := range g.nodes {
		if n.vm == nil {
			continue
		}
		ats, err := n.vm.List()
		if err != nil {
			continue
		}
		for _, at := range ats {
			key := n.ns.Name + "/" + at.Tap
			if at.TapInNS || g.made[key] {
				continue
			}
			if _, err := n.ns.Handle.LinkByName(at.Tap); err == nil {
				continue
			}
			g.made[key] = true
			ns := netlab.NewNS(g.t, "g"+strconv.Itoa(at.Slot))
			// The tap appears in the node's namespace last and is left alone there: the
			// agent moves it into the address's namespace and brings it up as soon as it exists.
			ns.IP(g.t, "link", "add", "eth0", "type", "veth", "peer", "name", at.Tap, "netns", n.ns.Name)
			ns.IP(g.t, "addr", "add", netip.PrefixFrom(at.Addr, 32).String(), "dev", "eth0")
			ns.IP(g.t, "link", "set", "eth0", "up")
			ns.IP(g.t, "route", "add", "default", "via", vmnet.Gateway.String(), "dev", "eth0", "onlink")
			l, err := ns.Listen("tcp", ":8080")
			if err != nil {
				g.t.Fatal(err)
			}
			addr := at.Addr
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprintf(w, "hello from %s to %s", addr, r.RemoteAddr)
			}), ReadHeaderTimeout: time.Second}
			go func() { _ = srv.Serve(l) }()
			g.t.Cleanup(func() { _ = srv.Close() })
			g.mu.Lock()
			g.servers[addr] = append(g.servers[addr], srv)
			g.mu.Unlock()
		}
	}
}

// kill stops every HTTP server of VM address a (the guest's service dies; its route stays).
func (g *guests) kill(a netip.Addr) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, s := range g.servers[a] {
		_ = s.Close()
	}
}

// until polls cond every 50 ms, plumbing guests meanwhile, until it holds; it fails the
// test after timeout and returns how long it took.
func (g *guests) until(timeout time.Duration, what string, cond func() bool) time.Duration {
	g.t.Helper()
	start := time.Now()
	for {
		g.plumb()
		if cond() {
			return time.Since(start)
		}
		if time.Since(start) > timeout {
			g.t.Fatalf("%s: not within %v", what, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// viaAnswer is who answered a request through the fabric: the VM address and the address
// the request reached it from (a load-balancer node's uplink for requests to a VIP).
type viaAnswer struct{ vm, from string }

func getVia(c *http.Client, url string) (viaAnswer, error) {
	res, err := c.Get(url)
	if err != nil {
		return viaAnswer{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return viaAnswer{}, err
	}
	f := strings.Fields(string(b)) // hello from ADDR to A:P
	if len(f) != 5 {
		return viaAnswer{}, fmt.Errorf("unexpected answer %q", b)
	}
	from, _, _ := net.SplitHostPort(f[4])
	return viaAnswer{vm: f[2], from: from}, nil
}

func nsClient(ns *netlab.NS, timeout time.Duration, keepAlive bool) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{DialContext: ns.DialContext,
		DisableKeepAlives: !keepAlive, MaxIdleConnsPerHost: 16}}
}

// requestRate runs workers concurrent clients against url for d and returns requests/s.
func requestRate(t *testing.T, c *http.Client, url string, workers int, d time.Duration) float64 {
	t.Helper()
	var n, failed atomic.Int64
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				if _, err := getVia(c, url); err != nil {
					failed.Add(1)
					continue
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	if failed.Load() > 0 {
		t.Errorf("%s: %d of %d requests failed", url, failed.Load(), failed.Load()+n.Load())
	}
	return float64(n.Load()) / d.Seconds()
}

// killNS kills every process in ns: the node's BGP speaker and HAProxy die at once and the
// kernel closes the BGP session.
func killNS(t *testing.T, ns *netlab.NS) {
	t.Helper()
	out, err := exec.Command("ip", "netns", "pids", ns.Name).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(f); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// freePort is a TCP port free on 127.0.0.1 now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// powerDNS is an authoritative PowerDNS (gsqlite3 backend) on 127.0.0.1 of the test's own
// namespace: its HTTP API at apiURL with key, DNS on dns.
type powerDNS struct {
	apiURL, key string
	dns         string
}

func startPowerDNSLocal(t *testing.T) powerDNS {
	t.Helper()
	dir := t.TempDir()
	db := filepath.Join(dir, "pdns.sqlite3")
	schema, err := os.ReadFile(pdnsSchema)
	if err != nil {
		t.Fatal(err)
	}
	init := exec.Command("sqlite3", db)
	init.Stdin = strings.NewReader(string(schema))
	if out, err := init.CombinedOutput(); err != nil {
		t.Fatalf("sqlite3 schema: %v: %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "pdns.conf"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	p := powerDNS{key: "virtflow-test-key"}
	apiPort, dnsPort := freePort(t), freePort(t)
	p.apiURL, p.dns = fmt.Sprintf("http://127.0.0.1:%d", apiPort), fmt.Sprintf("127.0.0.1:%d", dnsPort)
	cmd := exec.Command("pdns_server", "--config-dir="+dir, "--socket-dir="+dir, "--guardian=no", "--daemon=no",
		"--disable-syslog", "--write-pid=no", "--launch=gsqlite3", "--gsqlite3-database="+db,
		"--local-address=127.0.0.1", "--local-port="+strconv.Itoa(dnsPort), "--api=yes", "--api-key="+p.key,
		"--webserver=yes", "--webserver-address=127.0.0.1", "--webserver-port="+strconv.Itoa(apiPort),
		"--webserver-allow-from=127.0.0.0/8", "--loglevel=3")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return p
}

// resolve asks the PowerDNS at server for name's addresses (sorted; nil when none).
func resolve(server, name string) []string {
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, server)
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	addrs, err := r.LookupHost(ctx, name)
	if err != nil {
		return nil
	}
	slices.Sort(addrs)
	return addrs
}

// lbView is a load balancer as the API shows it.
type lbView struct {
	Status, StatusReason string
	Members              []struct {
		VMID            int
		Address, Health string
	}
	NodeStates []struct {
		NodeID     int
		NodeName   string
		Announced  bool
		Forwarding bool
	}
}

// TestTrafficRegionServiceThroughAgents walks issue 27's traffic path through the API and the
// real agents: the server and worker (app.RunServer, app.RunWorker with its traffic loop) on
// PostgreSQL and Redis; three nodes in three racks, each a namespace running its agent in
// routed mode with load balancers (HAProxy in the node's namespace) and a BGP speaker peering
// with BIRD as the rack-leaf router; a client behind the leaf; PowerDNS fed by the worker's
// GSLB publisher, which checks the VIPs through the worker's egress policy (the test's
// namespace reaches the service network through the leaf). Through GraphQL: a region service
// of 3 replicas with a load balancer (listener 80 → 8080), a second region service with one,
// and a global service over both. It checks: the leaf learns the replicas' /32s and the VIP
// from two load-balancer nodes; the client reaches every replica through the VIP; a replica
// killed leaves the pool (API: member DOWN) within its health-check interval; the client's
// load-balancer node killed (speaker and HAProxy), answers come through the other within 3 s;
// a drain moves a replica and its /32 follows; the global service's name resolves to both
// VIPs, then to the healthy region's VIP only once the other's replica died. It logs the
// figures (announce latency, failover times, requests/s through one load-balancer node
// against direct to a backend).
func TestTrafficRegionServiceThroughAgents(t *testing.T) {
	requireTrafficParts(t)
	pdns := startPowerDNSLocal(t)
	// Addresses of this run: the service network (VIPs) is routed from the test's namespace
	// to the leaf, so the worker's GSLB checks reach the VIPs.
	k := byte(os.Getpid()%200 + 20)
	svcNet := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 251, k, 0}), 24)
	vmNet := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 124, k, 0}), 24)
	rootAddr := netip.AddrFrom4([4]byte{10, 252, k, 2})
	leafRoot := netip.AddrFrom4([4]byte{10, 252, k, 1})
	st := startFleetWith(t, placementtest.Spec{Racks: 3, HostsPerRack: 1, PowerZones: 1, NetworkZones: 1,
		CPU: 16, MemoryMB: 65536, DiskGB: 500, Cores: 8}, func(cfg *config.Config) {
		cfg.GSLBPowerDNSURL, cfg.GSLBPowerDNSKey, cfg.GSLBZone = pdns.apiURL, pdns.key, "gslb.test"
		cfg.EgressAllow = "127.0.0.1," + svcNet.String()
	})
	ctx, c := gqltest.System(), st.env.Client
	api := &nodeagent.Client{URL: st.base, Token: gqltest.AdminToken}

	// The fabric: the leaf (BIRD, AS 65000) on a segment with the nodes, a client behind it,
	// and a link from the test's own namespace (where the worker runs) for the service network.
	leaf := netlab.NewNS(t, "leaf")
	leafAddr := netip.MustParseAddr("10.90.0.1")
	leaf.IP(t, "link", "add", "br0", "type", "bridge")
	leaf.IP(t, "addr", "add", "10.90.0.1/24", "dev", "br0")
	leaf.IP(t, "link", "set", "br0", "up")
	leaf.Sysctl(t, "net.ipv4.ip_forward", "1")
	client := netlab.NewNS(t, "client")
	netlab.Link(t, leaf, "cl0", netip.MustParsePrefix("10.91.0.1/30"), client, "eth0", netip.MustParsePrefix("10.91.0.2/30"))
	client.Route(t, netip.MustParsePrefix("0.0.0.0/0"), netip.MustParseAddr("10.91.0.1"))
	rootIf := "vfr" + strconv.Itoa(os.Getpid())
	leaf.IP(t, "link", "add", "rt0", "type", "veth", "peer", "name", rootIf, "netns", "1")
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", rootIf).Run() })
	leaf.IP(t, "addr", "add", netip.PrefixFrom(leafRoot, 30).String(), "dev", "rt0")
	leaf.IP(t, "link", "set", "rt0", "up")
	for _, args := range [][]string{{"addr", "add", netip.PrefixFrom(rootAddr, 30).String(), "dev", rootIf},
		{"link", "set", rootIf, "up"}, {"route", "add", svcNet.String(), "via", leafRoot.String()}} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v: %s", args, err, out)
		}
	}

	leafHost := c.Host.Create().SetName(st.site.Prefix + "-rack-leaf-router01").SetKind(host.KindRouter).SetRole(host.RoleRackLeaf).
		SetBgpAsn(65000).SetBgpAddress(leafAddr.String()).SaveX(ctx)
	var neighbors []netlab.BIRDNeighbor
	nodes := make([]*routedNode, 3)
	for i := range nodes {
		n := &routedNode{ns: netlab.NewNS(t, fmt.Sprintf("node%d", i)), addr: netip.AddrFrom4([4]byte{10, 90, 0, byte(2 + i)})}
		netlab.Link(t, n.ns, "eth0", netip.PrefixFrom(n.addr, 24), leaf, fmt.Sprintf("n%d", i), netip.Prefix{})
		leaf.IP(t, "link", "set", fmt.Sprintf("n%d", i), "master", "br0")
		n.ns.Route(t, netip.MustParsePrefix("0.0.0.0/0"), leafAddr)
		h := c.Host.UpdateOneID(st.site.Nodes[i].HostID).SetBgpAsn(int64(65101 + i)).SetBgpAddress(n.addr.String()).SaveX(ctx)
		hp := c.Port.Create().SetName("eth0").SetHostID(h.ID).SaveX(ctx)
		lp := c.Port.Create().SetName(fmt.Sprintf("swp%d", i+1)).SetHostID(leafHost.ID).SaveX(ctx)
		c.Link.Create().SetAPortID(hp.ID).SetBPortID(lp.ID).ExecX(ctx)
		neighbors = append(neighbors, netlab.BIRDNeighbor{Address: n.addr, ASN: uint32(65101 + i), Passive: true})
		nodes[i] = n
	}
	netlab.StartBIRD(t, leaf, netlab.BIRDConfig{RouterID: leafAddr, ASN: 65000, Neighbors: neighbors})
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	for i, n := range nodes {
		lb := &lbnet.Node{Proxy: &lbnet.Proxy{Dir: t.TempDir(), Command: n.ns.Command}, VIPs: nsVIPs{n.ns.Handle}, Log: quiet}
		n.stop = startRoutedAgent(t, st, i, n, func(cfg *nodeagent.Config) {
			cfg.LoadBalancers, cfg.LoadBalancerInterval, cfg.ResyncInterval = lb, 200*time.Millisecond, 2*time.Second
		})
	}
	g := &guests{t: t, nodes: nodes, servers: map[netip.Addr][]*http.Server{}, made: map[string]bool{}}
	byAddr := func(a netip.Addr) *routedNode {
		for _, n := range nodes {
			if n.addr == a {
				return n
			}
		}
		return nil
	}

	// Through the API: the routed network of the replicas, the service network of the VIPs,
	// two load-balanced region services, their listeners, and a global service over both.
	nw := c.Network.Create().SetName(st.site.Prefix + "-routed").SetCidr(vmNet.String()).SetVrf(st.site.Prefix).
		SetGateway(vmNet.Addr().Next().String()).SetDatacenterID(st.site.Datacenter).SaveX(ctx)
	c.Network.Create().SetName(st.site.Prefix + "-vips").SetCidr(svcNet.String()).SetVrf(st.site.Prefix + "-svc").
		SetPurpose(network.PurposeService).SetDatacenterID(st.site.Datacenter).ExecX(ctx)
	type created struct {
		ID           string
		LoadBalancer struct {
			ID  string
			Vip struct{ Address string }
		}
	}
	createService := func(name string, replicas int) created {
		t.Helper()
		var out struct{ CreateRegionService created }
		if err := api.Do(ctx, `mutation($in: CreateRegionServiceInput!) { createRegionService(input: $in) { id loadBalancer { id vip { address } } } }`,
			map[string]any{"in": map[string]any{"name": st.site.Prefix + "-" + name, "tenantID": gqltest.ID(st.site.Tenant),
				"regionID": gqltest.ID(st.site.Region), "flavorID": gqltest.ID(st.flavor.ID), "replicas": replicas,
				"loadBalanced": true, "networkIDs": []string{gqltest.ID(nw.ID)}}}, &out); err != nil {
			t.Fatal(err)
		}
		if err := api.Do(ctx, `mutation($id: ID!) { updateLoadBalancer(id: $id, input: {listeners: [{port: 80, protocol: "TCP", targetPort: 8080}], healthCheckIntervalMs: 1000}) { id } }`,
			map[string]any{"id": out.CreateRegionService.LoadBalancer.ID}, nil); err != nil {
			t.Fatal(err)
		}
		return out.CreateRegionService
	}
	start := time.Now()
	svcA := createService("web-a", 3)
	svcB := createService("web-b", 1)
	interval := time.Second
	vipA, vipB := netip.MustParseAddr(svcA.LoadBalancer.Vip.Address), netip.MustParseAddr(svcB.LoadBalancer.Vip.Address)
	var gs struct{ CreateGlobalService struct{ ID string } }
	if err := api.Do(ctx, `mutation($in: CreateGlobalServiceInput!) { createGlobalService(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"name": st.site.Prefix + "-web", "tenantID": gqltest.ID(st.site.Tenant),
			"fqdn": "web.gslb.test", "ttl": 5, "regionServiceIDs": []string{svcA.ID, svcB.ID}}}, &gs); err != nil {
		t.Fatal(err)
	}
	lbOf := func(id string) lbView {
		t.Helper()
		var out struct{ Node lbView }
		if err := api.Do(ctx, `query($id: ID!) { node(id: $id) { ... on LoadBalancer { status statusReason
			members { vmID address health } nodeStates { nodeID nodeName announced forwarding } } } }`,
			map[string]any{"id": id}, &out); err != nil {
			t.Fatal(err)
		}
		return out.Node
	}

	// The replicas run with their /32s announced; the load balancer is ACTIVE from two nodes.
	var reps []replica
	g.until(60*time.Second, "3 replicas ACTIVE, their /32s at the leaf", func() bool {
		reps = replicas(t, st, svcA.ID, nodes)
		if len(reps) != 3 {
			return false
		}
		for _, r := range reps {
			if ok, gws, _ := leaf.HasRoute(netip.PrefixFrom(r.addr, 32)); !ok || !slices.Equal(gws, []netip.Addr{r.node.addr}) {
				return false
			}
		}
		return true
	})
	t.Logf("3 replicas ACTIVE with their /32s at the leaf %v after createRegionService", time.Since(start))
	var lbNodes []netip.Addr
	announced := g.until(30*time.Second, "the leaf learns VIP A from two load-balancer nodes, the API says ACTIVE", func() bool {
		ok, gws, _ := leaf.HasRoute(netip.PrefixFrom(vipA, 32))
		lbNodes = gws
		return ok && len(gws) == 2 && lbOf(svcA.LoadBalancer.ID).Status == "ACTIVE"
	})
	t.Logf("VIP %v announced by %v and ACTIVE %v after the replicas were up (nodes chosen by the worker, first member checks included)", vipA, lbNodes, announced)

	// The client reaches every replica through the VIP.
	cl := nsClient(client, 2*time.Second, false)
	urlA := "http://" + vipA.String() + "/"
	seen := map[string]bool{}
	var via string
	for range 12 {
		a, err := getVia(cl, urlA)
		if err != nil {
			t.Fatalf("client to VIP %v: %v", vipA, err)
		}
		seen[a.vm], via = true, a.from
	}
	if len(seen) != 3 {
		t.Fatalf("through the VIP the client reached %v, want the 3 replicas", seen)
	}

	// GSLB: both regions healthy, the name resolves to both VIPs.
	g.until(30*time.Second, "web.gslb.test resolves to both VIPs", func() bool {
		return slices.Equal(resolve(pdns.dns, "web.gslb.test"), sortedStrings(vipA, vipB))
	})

	// A replica killed leaves the pool within its health-check interval.
	victim := reps[0]
	g.kill(victim.addr)
	killed := time.Now()
	memberDown := g.until(10*time.Second, "the killed replica DOWN in the API", func() bool {
		for _, m := range lbOf(svcA.LoadBalancer.ID).Members {
			if m.VMID == victim.vm {
				return m.Health == "DOWN"
			}
		}
		return false
	})
	// The bound is the check interval; the agent reads HAProxy every 200 ms and
	// reports, and the test polls the API every 50 ms: allow half an interval for those.
	if memberDown > interval+interval/2 {
		t.Errorf("member DOWN in the API %v after it died, want within the %v check interval (+%v to report)", memberDown, interval, interval/2)
	}
	for range 12 {
		if a, err := getVia(cl, urlA); err != nil || a.vm == victim.addr.String() {
			t.Fatalf("after replica %v died: %+v %v", victim.addr, a, err)
		}
	}
	t.Logf("member failover: replica killed -> DOWN in the API %v later (check interval %v)", time.Since(killed), interval)

	// The client's load-balancer node dies (speaker and HAProxy killed, agent stopped):
	// answers come through the other within 3 s.
	// The guests see the node's 169.254.1.1, not which node proxied: the leaf says which
	// of its equal-cost paths the client's flows (hashed on source and destination) take.
	route := strings.Fields(leaf.IP(t, "route", "get", vipA.String(), "from", "10.91.0.2", "iif", "cl0"))
	if i := slices.Index(route, "via"); i >= 0 && i+1 < len(route) {
		via = route[i+1]
	}
	dead := byAddr(netip.MustParseAddr(via))
	if dead == nil {
		t.Fatalf("the leaf sends the client's requests via %s, no node (%v)", via, route)
	}
	fast := nsClient(client, 300*time.Millisecond, false)
	killNS(t, dead.ns)
	var got viaAnswer
	nodeFailover := g.until(10*time.Second, "answers through the other load-balancer node", func() bool {
		a, err := getVia(fast, urlA)
		got = a
		return err == nil
	})
	dead.stop()
	if nodeFailover > 3*time.Second {
		t.Errorf("load-balancer node failover took %v, want within 3 s", nodeFailover)
	}
	if ok, gws, _ := leaf.HasRoute(netip.PrefixFrom(vipA, 32)); !ok || slices.Contains(gws, dead.addr) {
		t.Errorf("after %s died the leaf routes VIP A via %v", dead.ns.Name, gws)
	}
	t.Logf("load-balancer node failover: %s (%v) killed -> client answered by %s in %v", dead.ns.Name, dead.addr, got.vm, nodeFailover)
	deadID := nodeIDOf(st, dead, nodes)
	c.ComputeNode.UpdateOneID(deadID).SetSchedulable(false).ExecX(ctx) // the operator cordons the dead node

	// The replicas of the dead node (their /32s went with its speaker) leave the pool too.
	onDead := map[int]bool{}
	for _, r := range reps {
		if r.node == dead {
			onDead[r.vm] = true
		}
	}
	g.until(10*time.Second, "the dead node's replicas DOWN", func() bool {
		for _, m := range lbOf(svcA.LoadBalancer.ID).Members {
			if onDead[m.VMID] && m.Health != "DOWN" {
				return false
			}
		}
		return true
	})

	// Requests/s through the remaining load-balancer node against direct to a backend.
	keep := nsClient(client, 2*time.Second, true)
	var direct netip.Addr
	for _, r := range replicas(t, st, svcA.ID, nodes) {
		if r.node != dead && r.addr != victim.addr {
			direct = r.addr
		}
	}
	viaLB := requestRate(t, keep, urlA, 8, time.Second)
	straight := requestRate(t, keep, "http://"+direct.String()+":8080/", 8, time.Second)
	t.Logf("requests/s: %.0f through one load-balancer node, %.0f direct to a backend: ratio %.2f", viaLB, straight, viaLB/straight)

	// A drain moves a replica off a living node; its /32 follows it to the third node.
	// The killed replica's node is drained when it lives (its guest comes back to life on the
	// new node: the drain restarts it there), otherwise another living replica's.
	mover := victim
	if victim.node == dead {
		for _, r := range replicas(t, st, svcA.ID, nodes) {
			if r.node != dead {
				mover = r
			}
		}
	}
	from := nodeIDOf(st, mover.node, nodes)
	if err := api.Do(ctx, `mutation($id: ID!) { drainNode(id: $id) { moving { id } } }`, map[string]any{"id": gqltest.ID(from)}, nil); err != nil {
		t.Fatal(err)
	}
	drainStart := time.Now()
	var to *routedNode
	g.until(60*time.Second, "the drained replica's /32 on another node", func() bool {
		ok, gws, _ := leaf.HasRoute(netip.PrefixFrom(mover.addr, 32))
		if !ok || len(gws) != 1 || gws[0] == mover.node.addr {
			return false
		}
		to = byAddr(gws[0])
		return to != nil && to != dead
	})
	t.Logf("drain: %v/32 moved from %s to %s, at the leaf %v after drainNode", mover.addr, mover.node.ns.Name, to.ns.Name, time.Since(drainStart))
	g.until(10*time.Second, "the client reaches the moved replica on its /32", func() bool {
		a, err := getVia(cl, "http://"+mover.addr.String()+":8080/")
		return err == nil && a.vm == mover.addr.String()
	})

	// GSLB: region B's only replica dies, its load balancer stops forwarding and withdraws;
	// the name resolves to region A's VIP only.
	for _, r := range replicas(t, st, svcB.ID, nodes) {
		g.kill(r.addr)
	}
	gslbFailover := g.until(30*time.Second, "web.gslb.test resolves to VIP A only", func() bool {
		return slices.Equal(resolve(pdns.dns, "web.gslb.test"), []string{vipA.String()})
	})
	t.Logf("GSLB: region B's replica died -> its VIP out of the DNS answer %v later (worker loop every 2 s, TTL 5 s bounds resolver caches)", gslbFailover)
	var gsOut struct {
		Node struct {
			Status, StatusReason string
			DNSAnswer            []string
		}
	}
	readGS := func() {
		if err := api.Do(ctx, `query($id: ID!) { node(id: $id) { ... on GlobalService { status statusReason dnsAnswer } } }`,
			map[string]any{"id": gs.CreateGlobalService.ID}, &gsOut); err != nil {
			t.Fatal(err)
		}
	}
	readGS()
	if gsOut.Node.Status != "ACTIVE" || !slices.Equal(gsOut.Node.DNSAnswer, []string{vipA.String()}) {
		t.Errorf("global service %+v, want ACTIVE answering %v (A %+v, B %+v)", gsOut.Node, vipA,
			lbOf(svcA.LoadBalancer.ID), lbOf(svcB.LoadBalancer.ID))
	}
	if ok, _, _ := leaf.HasRoute(netip.PrefixFrom(vipB, 32)); ok {
		t.Errorf("VIP B still routed at the leaf with no healthy member")
	}
	t.Logf("whole walk %v", time.Since(start))
}

func sortedStrings(as ...netip.Addr) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.String()
	}
	slices.Sort(out)
	return out
}

// replica is a running VM of a region service: its id, address and node.
type replica struct {
	vm   int
	addr netip.Addr
	node *routedNode
}

// replicas lists the ACTIVE replicas of region service svc with their first address.
func replicas(t *testing.T, st *fleetStack, svc string, nodes []*routedNode) []replica {
	t.Helper()
	vms := st.env.Client.VirtualMachine.Query().Where(virtualmachine.HasRegionServiceWith(regionservice.ID(mustInt(t, svc))),
		virtualmachine.StatusEQ(virtualmachine.StatusActive)).WithNode().
		WithPorts(func(q *ent.PortQuery) { q.WithIPAddresses() }).Order(ent.Asc(virtualmachine.FieldID)).AllX(gqltest.System())
	var out []replica
	for _, vm := range vms {
		r := replica{vm: vm.ID}
		if vm.Edges.Node != nil {
			for i, n := range st.site.Nodes {
				if n.ID == vm.Edges.Node.ID {
					r.node = nodes[i]
				}
			}
		}
		for _, p := range vm.Edges.Ports {
			for _, ip := range p.Edges.IPAddresses {
				if a, err := netip.ParseAddr(ip.Address); err == nil && !r.addr.IsValid() {
					r.addr = a
				}
			}
		}
		if r.node != nil && r.addr.IsValid() {
			out = append(out, r)
		}
	}
	return out
}

// nodeIDOf is the compute node id of n.
func nodeIDOf(st *fleetStack, n *routedNode, nodes []*routedNode) int {
	for i, m := range nodes {
		if m == n {
			return st.site.Nodes[i].ID
		}
	}
	return 0
}
