package vmnet

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/virtflow/virtflow/internal/testkit/netlab"
)

// guest is a simulated VM: a namespace holding the guest end of the VM's NIC (a veth whose
// other end, named like the tap the hypervisor would make, starts in the node's namespace).
func newGuest(t *testing.T, node *netlab.NS, addr netip.Addr, tap string) *netlab.NS {
	t.Helper()
	g := netlab.NewNS(t, "guest")
	netlab.Link(t, node, tap, netip.Prefix{}, g, "eth0", netip.PrefixFrom(addr, 32))
	g.IP(t, "route", "add", "default", "via", Gateway.String(), "dev", "eth0", "onlink")
	return g
}

// serveHTTP serves "hello from <name>" and the caller's address in ns on addr.
func serveHTTP(t *testing.T, ns *netlab.NS, addr string, name string) {
	t.Helper()
	l, err := ns.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s to %s", name, r.RemoteAddr)
	}), ReadHeaderTimeout: time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
}

// get fetches url from inside ns.
func get(ns *netlab.NS, url string) (string, error) {
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DialContext: ns.DialContext, DisableKeepAlives: true}}
	res, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return string(b), err
}

// getQuick is get with a short timeout, for checking that a packet is dropped.
func getQuick(ns *netlab.NS, url string) (string, error) {
	c := &http.Client{Timeout: 400 * time.Millisecond, Transport: &http.Transport{DialContext: ns.DialContext, DisableKeepAlives: true}}
	res, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return string(b), err
}

func newManager(t *testing.T, node *netlab.NS) *Manager {
	t.Helper()
	m, err := New(Config{HostNS: node.Fd(), NSPrefix: node.Name + "-vm-"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	if err := m.Setup(); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRoutedVMAddress realizes a VM address on a node namespace and checks the L3 path both
// ways (node to guest on its /32; guest to the metadata address with its own source), that a
// restarted manager re-finds the attachment, and that removal leaves nothing behind.
func TestRoutedVMAddress(t *testing.T) {
	node := netlab.NewNS(t, "node")
	m := newManager(t, node)
	vm := netip.MustParseAddr("172.16.0.10")
	at, err := m.Ensure(vm)
	if err != nil {
		t.Fatal(err)
	}
	if at.Slot != 0 || at.NSAddr != netip.MustParseAddr("169.254.32.0") || at.Tap != "vft0" || at.TapInNS {
		t.Fatalf("attachment %+v", at)
	}
	t.Cleanup(func() { _ = m.Remove(vm) })
	g := newGuest(t, node, vm, at.Tap) // the hypervisor made the tap in the node's namespace
	if at, err = m.AttachTap(vm); err != nil || !at.TapInNS {
		t.Fatalf("AttachTap: %+v %v", at, err)
	}
	if ok, gws, _ := node.HasRoute(netip.PrefixFrom(vm, 32)); !ok || len(gws) != 1 || gws[0] != at.NSAddr {
		t.Fatalf("node route to %v: %v via %v", vm, ok, gws)
	}
	serveHTTP(t, g, vm.String()+":8080", "guest")
	serveHTTP(t, node, MetadataAddr.String()+":80", "metadata")
	if body, err := get(node, "http://"+vm.String()+":8080/"); err != nil || !strings.HasPrefix(body, "hello from guest") {
		t.Fatalf("node to guest: %q %v", body, err)
	}
	body, err := get(g, "http://"+MetadataAddr.String()+"/")
	if err != nil || !strings.Contains(body, "to "+vm.String()+":") {
		t.Fatalf("guest to metadata (must arrive from the VM's address): %q %v", body, err)
	}

	// A second address gets the next slot; a spoofed source from the guest is dropped.
	vm2 := netip.MustParseAddr("172.16.0.11")
	at2, err := m.Ensure(vm2)
	if err != nil || at2.Slot != 1 {
		t.Fatalf("second address: %+v %v", at2, err)
	}
	g.IP(t, "addr", "add", vm2.String()+"/32", "dev", "eth0")
	err = g.Do(func() error {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: vm2.AsSlice()}, Timeout: 500 * time.Millisecond}
		c, err := d.Dial("tcp", MetadataAddr.String()+":80")
		if err == nil {
			c.Close()
		}
		return err
	})
	if err == nil {
		t.Fatal("a guest reached the metadata address with another VM's source address")
	}

	// A manager started afresh (agent restart) re-finds both.
	m2 := newManager(t, node)
	list, err := m2.List()
	if err != nil || len(list) != 2 || list[0].Addr != vm || !list[0].TapInNS || list[1].Addr != vm2 || list[1].TapInNS {
		t.Fatalf("List after restart: %+v %v", list, err)
	}
	removed, err := m2.Prune([]netip.Addr{vm})
	if err != nil || len(removed) != 1 || removed[0] != vm2 {
		t.Fatalf("Prune: %v %v", removed, err)
	}
	if err := m2.Remove(vm); err != nil {
		t.Fatal(err)
	}
	if list, _ := m2.List(); len(list) != 0 {
		t.Fatalf("after Remove: %+v", list)
	}
	if ok, _, _ := node.HasRoute(netip.PrefixFrom(vm, 32)); ok {
		t.Fatal("route to the removed address left behind")
	}
}

func TestEnsureRejectsBadAddresses(t *testing.T) {
	node := netlab.NewNS(t, "node")
	m := newManager(t, node)
	for _, a := range []string{"169.254.32.5", "127.0.0.1", "0.0.0.0", "fd00::1", "169.254.9.9"} {
		if _, err := m.Ensure(netip.MustParseAddr(a)); err == nil {
			t.Errorf("Ensure(%s) accepted", a)
		}
	}
}
