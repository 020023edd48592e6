package lbnet_test

import (
	"context"
	"fmt"
	"io"
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

	"github.com/virtflow/virtflow/agent/lbnet"
	"github.com/virtflow/virtflow/agent/vmnet"
	"github.com/virtflow/virtflow/controllers/gslb"
	"github.com/virtflow/virtflow/internal/testkit/netlab"
)

// requireDaemons skips unless namespaces and the daemons the traffic test runs exist.
func requireDaemons(t *testing.T) {
	t.Helper()
	netlab.Require(t)
	for _, bin := range []struct{ name, pkg string }{{"bird", "bird2"}, {"birdc", "bird2"}, {"haproxy", "haproxy"},
		{"pdns_server", "pdns-server, pdns-backend-sqlite3"}, {"sqlite3", "sqlite3"}} {
		if _, err := exec.LookPath(bin.name); err != nil {
			t.Skipf("needs %s (Debian %s): %v", bin.name, bin.pkg, err)
		}
	}
	if _, err := os.Stat(pdnsSchema); err != nil {
		t.Skipf("needs the gsqlite3 backend of PowerDNS (Debian pdns-backend-sqlite3): %v", err)
	}
}

const pdnsSchema = "/usr/share/doc/pdns-backend-sqlite3/schema.sqlite3.sql"

// guestVM is a simulated VM: a namespace holding the guest end of the VM's NIC, serving
// HTTP on :8080 with "hello from <name> to <client address>".
type guestVM struct {
	id   int
	addr netip.Addr
	ns   *netlab.NS
	srv  *http.Server
}

func startGuest(t *testing.T, m *vmnet.Manager, node *netlab.NS, id int, addr netip.Addr) *guestVM {
	t.Helper()
	at, err := m.Ensure(addr)
	if err != nil {
		t.Fatal(err)
	}
	g := netlab.NewNS(t, "vm"+strconv.Itoa(id))
	netlab.Link(t, node, at.Tap, netip.Prefix{}, g, "eth0", netip.PrefixFrom(addr, 32))
	g.IP(t, "route", "add", "default", "via", vmnet.Gateway.String(), "dev", "eth0", "onlink")
	if _, err := m.AttachTap(addr); err != nil {
		t.Fatal(err)
	}
	l, err := g.Listen("tcp", ":8080")
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("vm%d", id)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s to %s", name, r.RemoteAddr)
	}), ReadHeaderTimeout: time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return &guestVM{id: id, addr: addr, ns: g, srv: srv}
}

// answer is who answered a request: the VM and the address the request came from (the
// load-balancer node for requests through a VIP).
type answer struct{ vm, from string }

func httpClient(ns *netlab.NS, timeout time.Duration, keepAlive bool) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{DialContext: ns.DialContext,
		DisableKeepAlives: !keepAlive, MaxIdleConnsPerHost: 16}}
}

func get(c *http.Client, url string) (answer, error) {
	res, err := c.Get(url)
	if err != nil {
		return answer{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return answer{}, err
	}
	f := strings.Fields(string(b)) // hello from vmN to A:P
	if len(f) != 5 {
		return answer{}, fmt.Errorf("unexpected answer %q", b)
	}
	from, _, _ := net.SplitHostPort(f[4])
	return answer{vm: f[2], from: from}, nil
}

// killNamespace kills every process in ns (the node "dies": its agent, BGP speaker and
// HAProxy all go at once; the kernel closes the BGP session).
func killNamespace(t *testing.T, ns *netlab.NS) {
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

// waitFor polls cond every 20 ms until it holds or timeout passes and returns how long it
// took; it fails the test with what on timeout.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > timeout {
			t.Fatalf("%s: not within %v", what, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

// rate runs workers concurrent clients against url for d and returns requests per second.
func rate(t *testing.T, c *http.Client, url string, workers int, d time.Duration) float64 {
	t.Helper()
	var n, failed atomic.Int64
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				if _, err := get(c, url); err != nil {
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

// TestDataPlaneFailoverAndGSLB drives the data plane of issue 27 directly on namespaces (the
// path through the API and the agents is nodeagent's TestTrafficRegionServiceThroughAgents): a
// rack-leaf router (BIRD), two app nodes with routed VM addresses (vmnet, announced by the
// node's BGP speaker), a region service's 3 replicas behind a load balancer served by two
// load-balancer nodes (HAProxy, VIP announced from both: anycast with ECMP at the router), a
// second region's load balancer, a client and an authoritative DNS server (PowerDNS) fed by
// the GSLB publisher. It checks: the router learns the /32s and the VIP (two paths); the
// client reaches every replica through the VIP; a killed replica leaves the pool within its
// health-check interval; with the client's load-balancer node killed the client gets answers
// through the other within 3 s; a drained VM's /32 follows it to its new node; the global
// service's name resolves to the healthy region's VIP only, and to none once that region's
// service is detached. It logs the failover times and requests/s through one load-balancer
// node against a direct connection to a backend.
func TestDataPlaneFailoverAndGSLB(t *testing.T) {
	requireDaemons(t)
	leaf := netlab.NewNS(t, "leaf")
	leaf.Sysctl(t, "net.ipv4.ip_forward", "1")
	leafAddr := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{10, 99, byte(i), 1}) }
	// Every namespace hangs off the leaf on 10.99.<i>.0/30 (.1 the leaf, .2 the namespace).
	attach := func(label string, i int) (*netlab.NS, netip.Addr) {
		ns := netlab.NewNS(t, label)
		a := netip.AddrFrom4([4]byte{10, 99, byte(i), 2})
		netlab.Link(t, leaf, "d"+strconv.Itoa(i), netip.PrefixFrom(leafAddr(i), 30), ns, "up0", netip.PrefixFrom(a, 30))
		ns.Route(t, netip.MustParsePrefix("0.0.0.0/0"), leafAddr(i))
		return ns, a
	}
	node1NS, node1Addr := attach("node1", 1)
	node2NS, node2Addr := attach("node2", 2)
	lb1NS, lb1Addr := attach("lb1", 3)
	lb2NS, lb2Addr := attach("lb2", 4)
	lb3NS, lb3Addr := attach("lb3", 5)
	client, _ := attach("client", 6)
	dnsNS, dnsAddr := attach("dns", 7)

	var neighbors []netlab.BIRDNeighbor
	for i, a := range []netip.Addr{node1Addr, node2Addr, lb1Addr, lb2Addr, lb3Addr} {
		neighbors = append(neighbors, netlab.BIRDNeighbor{Address: a, ASN: uint32(65101 + i), Passive: true})
	}
	netlab.StartBIRD(t, leaf, netlab.BIRDConfig{RouterID: leafAddr(1), ASN: 65000, Neighbors: neighbors})
	node1 := startNode(t, node1NS, node1Addr, leafAddr(1), 65101)
	node2 := startNode(t, node2NS, node2Addr, leafAddr(2), 65102)
	lb1 := startNode(t, lb1NS, lb1Addr, leafAddr(3), 65103)
	lb2 := startNode(t, lb2NS, lb2Addr, leafAddr(4), 65104)
	lb3 := startNode(t, lb3NS, lb3Addr, leafAddr(5), 65105)
	for _, n := range []*nodeProc{node1, node2, lb1, lb2, lb3} {
		n.do(t, "wait")
	}

	// The region service's replicas: two on node1, one on node2; region B's one replica on node2.
	manager := func(ns *netlab.NS) *vmnet.Manager {
		m, err := vmnet.New(vmnet.Config{HostNS: ns.Fd(), NSPrefix: ns.Name + "-vm-"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(m.Close)
		if err := m.Setup(); err != nil {
			t.Fatal(err)
		}
		return m
	}
	m1, m2 := manager(node1NS), manager(node2NS)
	vm11 := startGuest(t, m1, node1NS, 11, netip.MustParseAddr("172.16.0.11"))
	vm12 := startGuest(t, m1, node1NS, 12, netip.MustParseAddr("172.16.0.12"))
	vm13 := startGuest(t, m2, node2NS, 13, netip.MustParseAddr("172.16.0.13"))
	vm21 := startGuest(t, m2, node2NS, 21, netip.MustParseAddr("172.16.1.21"))
	for _, v := range []struct {
		vm   *guestVM
		node *nodeProc
	}{{vm11, node1}, {vm12, node1}, {vm13, node2}, {vm21, node2}} {
		v.node.do(t, "announce "+netip.PrefixFrom(v.vm.addr, 32).String())
		d := leaf.WaitRoute(t, netip.PrefixFrom(v.vm.addr, 32), v.node.addr, true, time.Second)
		t.Logf("router learned %v/32 via %v in %v", v.vm.addr, v.node.addr, d)
	}

	// Region A's load balancer on lb1 and lb2, region B's on lb3.
	vipA, vipB := netip.MustParseAddr("10.250.0.10"), netip.MustParseAddr("10.250.1.10")
	interval := time.Second
	specA := lbnet.Spec{ID: 1, VIP: vipA, CheckInterval: interval,
		Listeners: []lbnet.Listener{{Port: 80, Protocol: lbnet.TCP, TargetPort: 8080}},
		Members:   []lbnet.Member{{ID: 11, Address: vm11.addr}, {ID: 12, Address: vm12.addr}, {ID: 13, Address: vm13.addr}}}
	specB := lbnet.Spec{ID: 2, VIP: vipB, CheckInterval: interval,
		Listeners: []lbnet.Listener{{Port: 80, Protocol: lbnet.TCP, TargetPort: 8080}},
		Members:   []lbnet.Member{{ID: 21, Address: vm21.addr}}}
	configured, logged := time.Now(), false
	lb1.serve(t, specA)
	lb2.serve(t, specA)
	lb3.serve(t, specB)
	paths := func(p netip.Prefix) []netip.Addr {
		ok, gws, err := leaf.HasRoute(p)
		if err != nil || !ok {
			return nil
		}
		slices.SortFunc(gws, func(a, b netip.Addr) int { return a.Compare(b) })
		return gws
	}
	vipAnet := netip.PrefixFrom(vipA, 32)
	d := waitFor(t, 5*time.Second, "router learns VIP A from lb1 and lb2", func() bool {
		if slices.Equal(paths(vipAnet), []netip.Addr{lb1Addr, lb2Addr}) {
			return true
		}
		if time.Since(configured) > 4950*time.Millisecond && !logged {
			logged = true
			t.Logf("lb1 %+v lb2 %+v paths %v", lb1.states(t), lb2.states(t), paths(vipAnet))
		}
		return false
	})
	t.Logf("router learned VIP %v via lb1 and lb2 (ECMP) %v after the load balancers were configured (first member checks included)", vipA, d)
	leaf.WaitRoute(t, netip.PrefixFrom(vipB, 32), lb3Addr, true, 5*time.Second)
	for _, s := range lb1.states(t) {
		if !s.Forwarding || !s.Announced {
			t.Fatalf("lb1 state %+v: want forwarding and announced", s)
		}
	}

	// The client reaches every replica through the VIP.
	c := httpClient(client, 2*time.Second, false)
	urlA := "http://" + vipA.String() + "/"
	seen := map[string]bool{}
	var via string
	for range 9 {
		a, err := get(c, urlA)
		if err != nil {
			t.Fatalf("client to VIP: %v", err)
		}
		seen[a.vm] = true
		via = a.from
	}
	if len(seen) != 3 {
		t.Fatalf("through the VIP the client reached %v, want all 3 replicas", seen)
	}

	// A replica killed leaves the pool within its health-check interval.
	_ = vm11.srv.Close()
	killed := time.Now()
	for lb1.memberHealth(t, 1, 11) != lbnet.Down || lb2.memberHealth(t, 1, 11) != lbnet.Down {
		if time.Since(killed) > 5*time.Second {
			t.Fatalf("member 11 still %s/%s on lb1/lb2 5 s after it died", lb1.memberHealth(t, 1, 11), lb2.memberHealth(t, 1, 11))
		}
		time.Sleep(10 * time.Millisecond)
	}
	memberFailover := time.Since(killed)
	// The bound: within the check interval. A refused connection fails its check at
	// once; the node reads HAProxy's state every 100 ms and the test polls both nodes, so
	// allow a quarter of the interval for reading it.
	if memberFailover > interval+interval/4 {
		t.Errorf("member left the pool after %v, want within the %v check interval (+%v to read it)", memberFailover, interval, interval/4)
	}
	t.Logf("member failover: replica killed -> out of the pool on both load-balancer nodes in %v (check interval %v)", memberFailover, interval)
	for range 12 {
		a, err := get(c, urlA)
		if err != nil || a.vm == "vm11" {
			t.Fatalf("after the replica died: %+v %v", a, err)
		}
	}

	// The client's load-balancer node dies: answers come through the other within 3 s.
	dead, other := lb1, lb2
	if via == lb2Addr.String() {
		dead, other = lb2, lb1
	}
	t.Logf("the client's requests go through %s (%v)", dead.ns.Name, via)
	fast := httpClient(client, 300*time.Millisecond, false)
	killNamespace(t, dead.ns)
	killed = time.Now()
	var got answer
	for {
		a, err := get(fast, urlA)
		if err == nil && a.from == other.addr.String() {
			got = a
			break
		}
		if time.Since(killed) > 10*time.Second {
			t.Fatalf("no answer through %s 10 s after %s died: %v", other.ns.Name, dead.ns.Name, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	nodeFailover := time.Since(killed)
	if nodeFailover > 3*time.Second {
		t.Errorf("load-balancer node failover took %v, want within 3 s", nodeFailover)
	}
	t.Logf("load-balancer node failover: %s killed -> client answered by %s through %s in %v; router paths now %v",
		dead.ns.Name, got.vm, other.ns.Name, nodeFailover, paths(vipAnet))
	if p := paths(vipAnet); !slices.Equal(p, []netip.Addr{other.addr}) {
		t.Errorf("router paths to the VIP after the node died: %v, want only %v", p, other.addr)
	}

	// Requests/s through the one remaining load-balancer node against a direct connection
	// to a backend (keep-alive, 8 concurrent clients, 1 s each).
	keep := httpClient(client, 2*time.Second, true)
	viaLB := rate(t, keep, urlA, 8, time.Second)
	direct := rate(t, keep, "http://"+vm13.addr.String()+":8080/", 8, time.Second)
	t.Logf("requests/s: %.0f through one load-balancer node, %.0f direct to a backend: ratio %.2f", viaLB, direct, viaLB/direct)

	// A drain moves vm12 from node1 to node2 and its /32 follows it.
	node1.do(t, "withdraw "+netip.PrefixFrom(vm12.addr, 32).String())
	if err := m1.Remove(vm12.addr); err != nil {
		t.Fatal(err)
	}
	_ = vm12.srv.Close()
	moved := startGuest(t, m2, node2NS, 12, vm12.addr)
	start := time.Now()
	node2.do(t, "announce "+netip.PrefixFrom(moved.addr, 32).String())
	leaf.WaitRoute(t, netip.PrefixFrom(moved.addr, 32), node2Addr, true, time.Second)
	t.Logf("drain: %v/32 now via node2 %v after its announcement", moved.addr, time.Since(start))
	if a, err := get(c, "http://"+moved.addr.String()+":8080/"); err != nil || a.vm != "vm12" {
		t.Fatalf("the moved VM over its /32: %+v %v", a, err)
	}
	waitFor(t, 3*time.Second, "the moved VM back in the pool", func() bool { return other.memberHealth(t, 1, 12) == lbnet.Up })

	// GSLB: PowerDNS answers the global service's name with the healthy regions' VIPs.
	pub := startPowerDNS(t, dnsNS, dnsAddr)
	firstPort := func(s lbnet.Spec) int { return s.Listeners[0].Port }
	forwarding := func(n *nodeProc, id int) bool {
		for _, s := range n.states(t) {
			if s.ID == id {
				return s.Forwarding
			}
		}
		return false
	}
	svc := gslb.Service{FQDN: "web.gslb.test", TTL: 5, Members: []gslb.Member{
		{Name: "web-a", VIP: vipA, Port: firstPort(specA), Forwarding: forwarding(other, 1)},
		{Name: "web-b", VIP: vipB, Port: firstPort(specB), Forwarding: forwarding(lb3, 2)},
	}}
	ctx := context.Background()
	res, err := pub.Sync(ctx, svc)
	if err != nil {
		t.Fatal(err)
	}
	resolve := func() []string {
		r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return client.DialContext(ctx, network, netip.AddrPortFrom(dnsAddr, 53).String())
		}}
		addrs, err := r.LookupHost(ctx, svc.FQDN)
		if err != nil {
			return []string{"error: " + err.Error()}
		}
		slices.Sort(addrs)
		return addrs
	}
	if got := resolve(); !slices.Equal(got, []string{vipA.String(), vipB.String()}) {
		t.Fatalf("both regions healthy: %s resolves to %v (pushed %v, unhealthy %v)", svc.FQDN, got, res.Answer, res.Unhealthy)
	}
	// Region B's load balancer dies: its VIP leaves the answer.
	killNamespace(t, lb3NS)
	leaf.WaitRoute(t, netip.PrefixFrom(vipB, 32), netip.Addr{}, false, 3*time.Second)
	start = time.Now()
	if res, err = pub.Sync(ctx, svc); err != nil {
		t.Fatal(err)
	}
	if got := resolve(); !slices.Equal(got, []string{vipA.String()}) {
		t.Fatalf("region B dead: %s resolves to %v, want only %v (unhealthy %v)", svc.FQDN, got, vipA, res.Unhealthy)
	}
	t.Logf("GSLB: dead region's VIP out of the DNS answer %v after the check (unhealthy: %v); TTL %d s bounds resolver caches",
		time.Since(start), res.Unhealthy, svc.TTL)
	// Region closure: region A's service detached from the global service.
	svc.Members = svc.Members[1:]
	if _, err := pub.Sync(ctx, svc); err != nil {
		t.Fatal(err)
	}
	if got := resolve(); len(got) != 1 || !strings.HasPrefix(got[0], "error") {
		t.Fatalf("no healthy member: %s resolves to %v, want no address", svc.FQDN, got)
	}
}

// startPowerDNS runs PowerDNS (gsqlite3 backend, HTTP API on 127.0.0.1:8081 inside ns) in
// ns answering on addr:53, and returns a GSLB publisher for the zone gslb.test that checks
// members from ns.
func startPowerDNS(t *testing.T, ns *netlab.NS, addr netip.Addr) *gslb.Publisher {
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
	const key = "virtflow-test-key"
	cmd := ns.Command("pdns_server", "--config-dir="+dir, "--socket-dir="+dir, "--guardian=no", "--daemon=no",
		"--disable-syslog", "--write-pid=no", "--launch=gsqlite3", "--gsqlite3-database="+db,
		"--local-address="+addr.String(), "--local-port=53", "--api=yes", "--api-key="+key,
		"--webserver=yes", "--webserver-address=127.0.0.1", "--webserver-port=8081", "--webserver-allow-from=127.0.0.0/8",
		"--loglevel=3")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	api := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DialContext: ns.DialContext}}
	pub := &gslb.Publisher{DNS: &gslb.PowerDNS{BaseURL: "http://127.0.0.1:8081", APIKey: key, Client: api},
		Checker: gslb.Checker{Dial: ns.DialContext, Timeout: 500 * time.Millisecond}, Zone: "gslb.test", NameServer: "ns1.gslb.test"}
	waitFor(t, 10*time.Second, "PowerDNS API up", func() bool {
		return pub.DNS.EnsureZone(context.Background(), pub.Zone, pub.NameServer) == nil
	})
	return pub
}
