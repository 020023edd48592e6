package hostnet

import (
	"net"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// newNamespace returns a netlink handle in a new, unnamed network namespace made for the
// test (gone when the test ends); the host's own interfaces are never touched. Creating a
// namespace needs root (CAP_SYS_ADMIN): without it the test is skipped, naming that.
func newNamespace(t *testing.T) *netlink.Handle {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("creating a network namespace needs root")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer orig.Close()
	ns, err := netns.New() // switches this thread into the new namespace
	if err != nil {
		t.Fatalf("new network namespace: %v", err)
	}
	if err := netns.Set(orig); err != nil {
		t.Fatalf("back to the original namespace: %v", err)
	}
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		ns.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(); ns.Close() })
	return h
}

// addVeth adds a veth pair name/name-p in h's namespace and returns the first end (veth
// stands in for an uplink or a VM's tap: the kernels here have no dummy interfaces).
func addVeth(t *testing.T, h *netlink.Handle, name string) netlink.Link {
	t.Helper()
	peer := "p" + name
	if len(peer) > 15 {
		peer = peer[:15]
	}
	if err := h.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: name}, PeerName: peer}); err != nil {
		t.Fatalf("veth %s: %v", name, err)
	}
	l, err := h.LinkByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func linkNames(t *testing.T, h *netlink.Handle) []string {
	t.Helper()
	ls, err := h.LinkList()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range ls {
		out = append(out, l.Attrs().Name)
	}
	slices.Sort(out)
	return out
}

func TestBridgeName(t *testing.T) {
	for _, id := range []int64{1, 42, 4294967297, 1 << 51} {
		n := BridgeName(id)
		if len(n) > 15 || !strings.HasPrefix(n, "vfbr-") {
			t.Errorf("BridgeName(%d) = %q: want vfbr-… of at most 15 characters", id, n)
		}
		if n != BridgeName(id) {
			t.Errorf("BridgeName(%d) is not stable", id)
		}
	}
	if BridgeName(1) == BridgeName(2) {
		t.Error("two networks share a bridge name")
	}
}

// TestEnsureAndPrune builds two networks' bridges inside a namespace, checks they are
// separate and idempotent, that an existing bridge is adopted and never removed, and that
// Prune removes only what the manager created and nothing still in use.
func TestEnsureAndPrune(t *testing.T) {
	h := newNamespace(t)
	m := New(h, "") // no uplink: a network's VLAN stays off the node

	plain, err := m.Ensure(Network{ID: 7})
	if err != nil {
		t.Fatal(err)
	}
	tagged, err := m.Ensure(Network{ID: 8, VLAN: 100})
	if err != nil {
		t.Fatal(err)
	}
	if plain == tagged {
		t.Fatalf("two networks got one bridge %s", plain)
	}
	if _, err := m.Ensure(Network{ID: 8, VLAN: 100}); err != nil {
		t.Fatalf("second Ensure: %v", err)
	}
	br, err := h.LinkByName(tagged)
	if err != nil || br.Type() != "bridge" || br.Attrs().Flags&net.FlagUp == 0 {
		t.Fatalf("bridge %s: %v %v", tagged, br, err)
	}

	// An existing bridge of the expected name is adopted and never removed.
	adopted := BridgeName(10)
	if err := h.LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: adopted}}); err != nil {
		t.Fatal(err)
	}
	if name, err := m.Ensure(Network{ID: 10}); err != nil || name != adopted {
		t.Fatalf("adopt %s: %s %v", adopted, name, err)
	}

	// A bridge in use (a VM's interface plugged in, here one end of a veth pair) stays.
	tap := addVeth(t, h, "tap0")
	pb, _ := h.LinkByName(plain)
	if err := h.LinkSetMaster(tap, pb); err != nil {
		t.Fatal(err)
	}

	removed, err := m.Prune(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(removed, []string{tagged}) {
		t.Errorf("Prune removed %v, want [%s]", removed, tagged)
	}
	names := linkNames(t, h)
	for _, n := range []string{plain, adopted, "tap0", "ptap0"} {
		if !slices.Contains(names, n) {
			t.Errorf("%s was removed; links now %v", n, names)
		}
	}

	// Once unplugged, the bridge goes with the next Prune; kept ones stay.
	if err := h.LinkSetNoMaster(tap); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Ensure(Network{ID: 11}); err != nil {
		t.Fatal(err)
	}
	removed, err = m.Prune([]string{BridgeName(11)})
	if err != nil || !slices.Equal(removed, []string{plain}) {
		t.Errorf("Prune = %v, %v; want [%s]", removed, err, plain)
	}
	if !slices.Contains(linkNames(t, h), BridgeName(11)) {
		t.Error("a kept bridge was removed")
	}
}

// TestEnsureVLAN: with an uplink, a network with a VLAN gets VLAN interface vfvlan<id> of
// the uplink in its bridge; a second network on the same VLAN is refused; Prune removes
// both the bridge and the VLAN interface. It needs the kernel's 802.1Q support (module
// 8021q); without it the test is skipped, naming it.
func TestEnsureVLAN(t *testing.T) {
	h := newNamespace(t)
	up := addVeth(t, h, "up0")
	probe := &netlink.Vlan{LinkAttrs: netlink.LinkAttrs{Name: "probe.1", ParentIndex: up.Attrs().Index}, VlanId: 1}
	if err := h.LinkAdd(probe); err != nil {
		t.Skipf("the kernel cannot create VLAN interfaces (802.1Q, module 8021q): %v", err)
	}
	if err := h.LinkDel(probe); err != nil {
		t.Fatal(err)
	}
	m := New(h, "up0")
	tagged, err := m.Ensure(Network{ID: 8, VLAN: 100})
	if err != nil {
		t.Fatal(err)
	}
	br, _ := h.LinkByName(tagged)
	v, err := h.LinkByName(VLANName(100))
	if err != nil {
		t.Fatalf("VLAN interface: %v", err)
	}
	if vl, ok := v.(*netlink.Vlan); !ok || vl.VlanId != 100 || vl.ParentIndex != up.Attrs().Index || v.Attrs().MasterIndex != br.Attrs().Index {
		t.Fatalf("VLAN interface %+v: want VLAN 100 of up0 in %s", v.Attrs(), tagged)
	}
	if _, err := m.Ensure(Network{ID: 9, VLAN: 100}); err == nil || !strings.Contains(err.Error(), "carried by bridge") {
		t.Errorf("second network on VLAN 100: err %v, want carried by bridge", err)
	}
	removed, err := m.Prune(nil)
	slices.Sort(removed)
	want := []string{tagged, VLANName(100), BridgeName(9)}
	slices.Sort(want)
	if err != nil || !slices.Equal(removed, want) {
		t.Errorf("Prune = %v, %v; want %v", removed, err, want)
	}
	if !slices.Contains(linkNames(t, h), "up0") {
		t.Error("the uplink was removed")
	}
}

// TestEnsureRefusesForeignLink: a link of the bridge's name that is no bridge is an error,
// and is left alone.
func TestEnsureRefusesForeignLink(t *testing.T) {
	h := newNamespace(t)
	addVeth(t, h, BridgeName(3))
	m := New(h, "")
	if _, err := m.Ensure(Network{ID: 3}); err == nil || !strings.Contains(err.Error(), "not a bridge") {
		t.Fatalf("Ensure over a dummy: %v", err)
	}
	if removed, err := m.Prune(nil); err != nil || len(removed) != 0 {
		t.Fatalf("Prune removed %v (%v): want nothing", removed, err)
	}
}
