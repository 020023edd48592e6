// Package netlab builds small networks of Linux network namespaces for tests: named
// namespaces, veth links between them, routes, a BIRD router in a namespace, and
// listeners/dialers bound to a namespace from within the test process. It is test support
// only (it runs ip(8) and bird); product code configures the network with netlink.
//
// Everything it makes lives in namespaces it creates and removes when the test ends; no
// packet leaves them, and the machine's own interfaces are never touched. Namespaces need
// root, ip(8) (iproute2) and, for StartBIRD, BIRD 2: where they are missing the test is
// skipped, naming the missing part.
package netlab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

var seq atomic.Int64

// NS is a named network namespace made for a test.
type NS struct {
	// Name is the namespace's name (as `ip netns` knows it).
	Name string
	// Handle is a netlink handle bound to the namespace.
	Handle *netlink.Handle
	fd     netns.NsHandle
}

// Require skips the test unless namespaces can be made here (root and ip(8)).
func Require(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create network namespaces")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs ip(8) from iproute2 to create network namespaces")
	}
}

// NewNS creates a namespace named vf<pid>-<n>-<label> with its loopback up; it is deleted
// when the test ends.
func NewNS(t testing.TB, label string) *NS {
	t.Helper()
	Require(t)
	name := fmt.Sprintf("vf%d-%d-%s", os.Getpid(), seq.Add(1), label)
	run(t, "ip", "netns", "add", name)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	fd, err := netns.GetFromName(name)
	if err != nil {
		t.Fatalf("open namespace %s: %v", name, err)
	}
	h, err := netlink.NewHandleAt(fd)
	if err != nil {
		fd.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(); fd.Close() })
	ns := &NS{Name: name, Handle: h, fd: fd}
	ns.IP(t, "link", "set", "lo", "up")
	return ns
}

// Fd returns the namespace's file descriptor handle (valid until the test ends).
func (n *NS) Fd() netns.NsHandle { return n.fd }

// IP runs `ip -n <ns> args...` and fails the test on error; it returns the output.
func (n *NS) IP(t testing.TB, args ...string) string {
	t.Helper()
	return run(t, "ip", append([]string{"-n", n.Name}, args...)...)
}

// Command returns a command that runs name args... inside the namespace.
func (n *NS) Command(name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", n.Name, name}, args...)...)
}

// CommandContext is Command with a context.
func (n *NS) CommandContext(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", n.Name, name}, args...)...)
}

// Sysctl sets a sysctl (e.g. "net.ipv4.ip_forward", "1") inside the namespace.
func (n *NS) Sysctl(t testing.TB, key, value string) {
	t.Helper()
	run(t, "ip", "netns", "exec", n.Name, "sysctl", "-q", "-w", key+"="+value)
}

// Do runs fn on an OS thread switched into the namespace. Sockets fn creates stay in the
// namespace afterwards; goroutines fn starts do NOT run in it.
func (n *NS) Do(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			errc <- err
			runtime.UnlockOSThread()
			return
		}
		defer orig.Close()
		if err := netns.Set(n.fd); err != nil {
			errc <- err
			runtime.UnlockOSThread()
			return
		}
		ferr := fn()
		if err := netns.Set(orig); err != nil {
			// The thread is stuck in the namespace: leave it locked so that the runtime
			// discards it when this goroutine ends.
			errc <- errors.Join(ferr, err)
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// Listen opens a listener inside the namespace.
func (n *NS) Listen(network, addr string) (net.Listener, error) {
	var l net.Listener
	err := n.Do(func() (err error) { l, err = net.Listen(network, addr); return })
	return l, err
}

// DialContext dials from inside the namespace (usable as http.Transport.DialContext).
func (n *NS) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := n.Do(func() (err error) {
		var d net.Dialer
		c, err = d.DialContext(ctx, network, addr)
		return
	})
	return c, err
}

// Link connects a and b with a veth pair: aIf in a with aAddr, bIf in b with bAddr (either
// address may be the zero Prefix: no address). Both ends are up.
func Link(t testing.TB, a *NS, aIf string, aAddr netip.Prefix, b *NS, bIf string, bAddr netip.Prefix) {
	t.Helper()
	a.IP(t, "link", "add", aIf, "type", "veth", "peer", "name", bIf, "netns", b.Name)
	if aAddr.IsValid() {
		a.IP(t, "addr", "add", aAddr.String(), "dev", aIf)
	}
	if bAddr.IsValid() {
		b.IP(t, "addr", "add", bAddr.String(), "dev", bIf)
	}
	a.IP(t, "link", "set", aIf, "up")
	b.IP(t, "link", "set", bIf, "up")
}

// Route adds a route to dst via gw in n.
func (n *NS) Route(t testing.TB, dst netip.Prefix, gw netip.Addr) {
	t.Helper()
	n.IP(t, "route", "add", dst.String(), "via", gw.String())
}

// HasRoute reports whether n's main table holds a route for exactly dst, and its gateways.
func (n *NS) HasRoute(dst netip.Prefix) (bool, []netip.Addr, error) {
	ipn := &net.IPNet{IP: dst.Addr().AsSlice(), Mask: net.CIDRMask(dst.Bits(), dst.Addr().BitLen())}
	family := netlink.FAMILY_V4
	if dst.Addr().Is6() {
		family = netlink.FAMILY_V6
	}
	rs, err := n.Handle.RouteListFiltered(family, &netlink.Route{Dst: ipn}, netlink.RT_FILTER_DST)
	if err != nil {
		return false, nil, err
	}
	var gws []netip.Addr
	for _, r := range rs {
		if r.Gw != nil {
			a, _ := netip.AddrFromSlice(r.Gw)
			gws = append(gws, a.Unmap())
		}
		for _, nh := range r.MultiPath {
			a, _ := netip.AddrFromSlice(nh.Gw)
			gws = append(gws, a.Unmap())
		}
	}
	return len(rs) > 0, gws, nil
}

// WaitRoute polls (every 2 ms) until n's route for dst is present (want true; with gateway
// via, when valid) or absent (want false), and returns how long that took; it fails the
// test after timeout.
func (n *NS) WaitRoute(t testing.TB, dst netip.Prefix, via netip.Addr, want bool, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		ok, gws, err := n.HasRoute(dst)
		if err != nil {
			t.Fatal(err)
		}
		if want && ok && via.IsValid() {
			ok = false
			for _, g := range gws {
				ok = ok || g == via
			}
		}
		if ok == want {
			return time.Since(start)
		}
		if time.Since(start) > timeout {
			t.Fatalf("%s: route %v (via %v) present=%v after %v, want %v; routes:\n%s", n.Name, dst, via, ok, timeout, want, n.IP(t, "route"))
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// BIRDNeighbor is one BGP neighbour of a BIRD router.
type BIRDNeighbor struct {
	Address netip.Addr
	ASN     uint32
	// Passive makes BIRD wait for the neighbour to connect.
	Passive bool
}

// BIRDConfig configures StartBIRD.
type BIRDConfig struct {
	RouterID  netip.Addr
	ASN       uint32
	Neighbors []BIRDNeighbor
}

// BIRD is a BIRD 2 daemon running as a BGP router in a namespace: it imports every route
// its neighbours announce into the namespace's kernel table (equal-cost routes merged into
// one multipath route), so traffic through the namespace follows BGP.
type BIRD struct {
	NS     *NS
	socket string
}

// StartBIRD starts BIRD in ns; it stops when the test ends. The test is skipped when BIRD
// is not installed.
func StartBIRD(t testing.TB, ns *NS, cfg BIRDConfig) *BIRD {
	t.Helper()
	bin, err := exec.LookPath("bird")
	if err != nil {
		t.Skip("needs BIRD 2 (Debian package bird2) as the test's BGP router")
	}
	dir := t.TempDir()
	var b strings.Builder
	fmt.Fprintf(&b, "router id %s;\nlog stderr { warning, error, fatal };\n", cfg.RouterID)
	b.WriteString("protocol device { scan time 1; }\n")
	b.WriteString("protocol kernel { ipv4 { import none; export all; }; merge paths yes limit 16; }\n")
	for i, nb := range cfg.Neighbors {
		fmt.Fprintf(&b, "protocol bgp n%d {\n  local as %d;\n  neighbor %s as %d;\n", i, cfg.ASN, nb.Address, nb.ASN)
		b.WriteString("  hold time 3; keepalive time 1; connect retry time 1; connect delay time 1; error wait time 1, 2;\n")
		if nb.Passive {
			b.WriteString("  passive on;\n")
		}
		b.WriteString("  ipv4 { import all; export none; };\n}\n")
	}
	conf := filepath.Join(dir, "bird.conf")
	if err := os.WriteFile(conf, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "bird.ctl")
	var out bytes.Buffer
	cmd := ns.Command(bin, "-f", "-c", conf, "-s", sock)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start bird: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("bird in %s:\n%s", ns.Name, out.String())
		}
	})
	return &BIRD{NS: ns, socket: sock}
}

// Show runs `birdc show <args>` against the router and returns the output.
func (b *BIRD) Show(t testing.TB, args ...string) string {
	t.Helper()
	return run(t, "birdc", append([]string{"-s", b.socket, "show"}, args...)...)
}

func run(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}
