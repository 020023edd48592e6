// Package vmnet realizes the routed VM network of seed 001 ("VM network (L3
// advertisement)") on a node: every VM address gets a network namespace of its own between
// the VM's NIC and the node, and the node routes the address (a /32) into it, so that the
// node's BGP speaker (package bgp) can announce it to the rack-leaf routers.
//
// For a VM address A with slot N (0 ≤ N < 8192) the manager makes:
//
//	guest eth0  A/32, default via 169.254.1.1 (onlink)
//	   │ tap vft<N>   (the VM's NIC; proxy ARP answers for 169.254.1.1; strict rp_filter)
//	namespace <prefix><A>      ip_forward on; route A/32 dev vft<N>; default via 169.254.1.1
//	   │ veth vfn<N>  169.254.32.0/19 + N as /32 (the namespace's own address)
//	   │ veth vfh<N>  (alias "virtflow-vmnet:<A>"; strict rp_filter)
//	node               route 169.254.(32.0+N)/32 dev vfh<N>; route A/32 via 169.254.(32.0+N)
//	                   169.254.1.1/32 and 169.254.1.2/32 on lo (gateway, metadata service)
//
// A guest can only send with its own address: the namespace drops anything else arriving
// on its tap (rp_filter), and the node drops on vfh<N> any source not routed back through it.
// So the metadata service on 169.254.1.2 identifies a VM by its source address.
//
// The slot is recorded in the node-side veth's name and its alias (IFLA_IFALIAS), so an agent
// restarted later re-finds every namespace with List; the manager only ever removes links
// and namespaces it made. Everything goes through netlink (vishvananda/netlink) and
// namespace handles (vishvananda/netns), never ip(8); the few sysctls are written under
// /proc/sys from a thread inside the namespace concerned.
//
// ApplyACL (acl.go) puts a VM's security rules into an nftables table of the address's
// namespace; NewMetadataHandler (metadata.go) is the metadata service the node agent serves
// on MetadataAddr, which knows its caller by source address.
//
// The tap is created by the hypervisor when the domain starts (libvirt interface type
// "ethernet" with target dev vft<N>) in the node's namespace; AttachTap then moves it into
// the address's namespace (QEMU keeps its file descriptor) and routes the address to it.
package vmnet

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// Addresses of the design.
var (
	// Gateway is the guest's default gateway (answered by proxy ARP on its tap).
	Gateway = netip.MustParseAddr("169.254.1.1")
	// MetadataAddr is where the node agent serves the metadata service to its VMs.
	MetadataAddr = netip.MustParseAddr("169.254.1.2")
	// SlotRange is the range the namespaces' own addresses come from: one per VM address.
	SlotRange = netip.MustParsePrefix("169.254.32.0/19")
)

// MaxSlots is the number of VM addresses one node can hold (the size of SlotRange).
const MaxSlots = 1 << (32 - 19)

const alias = "virtflow-vmnet:"

// SlotAddr is the namespace address of slot n: SlotRange's n-th address.
func SlotAddr(n int) netip.Addr {
	b := SlotRange.Addr().As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v += uint32(n)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// TapName is the VM NIC's tap device for slot n; HostIf and NSIf the veth ends.
func TapName(n int) string { return "vft" + strconv.Itoa(n) }

// HostIf is the node-side veth of slot n.
func HostIf(n int) string { return "vfh" + strconv.Itoa(n) }

// NSIf is the namespace-side veth of slot n.
func NSIf(n int) string { return "vfn" + strconv.Itoa(n) }

// Attachment is the realized network of one VM address.
type Attachment struct {
	Addr      netip.Addr // the VM's address (routed as a /32)
	Slot      int
	Namespace string     // the namespace's name (under /var/run/netns)
	NSAddr    netip.Addr // the namespace's own address, SlotAddr(Slot)
	Tap       string     // the VM NIC's tap, TapName(Slot)
	TapInNS   bool       // the tap is in the namespace (AttachTap done)
}

// Config configures a Manager.
type Config struct {
	// HostNS is the node's network namespace (where the VMs' /32 routes and the metadata
	// address go). Production: the agent's own (netns.Get()); tests: a namespace of theirs.
	HostNS netns.NsHandle
	// NSPrefix starts the names of the namespaces (default "vfvm-"); the VM address follows.
	NSPrefix string
}

// Manager creates and removes the namespaces of a node's VM addresses. It is safe for
// concurrent use.
type Manager struct {
	cfg Config
	h   *netlink.Handle
	mu  sync.Mutex
}

// New returns a manager for the node namespace cfg.HostNS.
func New(cfg Config) (*Manager, error) {
	if !cfg.HostNS.IsOpen() {
		return nil, errors.New("vmnet: HostNS is required")
	}
	if cfg.NSPrefix == "" {
		cfg.NSPrefix = "vfvm-"
	}
	h, err := netlink.NewHandleAt(cfg.HostNS)
	if err != nil {
		return nil, fmt.Errorf("vmnet: netlink: %w", err)
	}
	return &Manager{cfg: cfg, h: h}, nil
}

// Close releases the manager's netlink handle (the networks stay).
func (m *Manager) Close() { m.h.Close() }

// Namespace is the name of the namespace of VM address a.
func (m *Manager) Namespace(a netip.Addr) string { return m.cfg.NSPrefix + a.String() }

// Setup prepares the node: IPv4 forwarding on, and the gateway and metadata addresses on lo.
// It is idempotent.
func (m *Manager) Setup() error {
	lo, err := m.h.LinkByName("lo")
	if err != nil {
		return fmt.Errorf("vmnet: lo: %w", err)
	}
	if err := m.h.LinkSetUp(lo); err != nil {
		return fmt.Errorf("vmnet: lo up: %w", err)
	}
	for _, a := range []netip.Addr{Gateway, MetadataAddr} {
		if err := m.h.AddrReplace(lo, addr32(a)); err != nil {
			return fmt.Errorf("vmnet: %v on lo: %w", a, err)
		}
	}
	return inNS(m.cfg.HostNS, func() error { return sysctl("net/ipv4/ip_forward", "1") })
}

// List returns the attachments present on the node, found by their node-side veths.
func (m *Manager) List() ([]Attachment, error) {
	links, err := m.h.LinkList()
	if err != nil {
		return nil, fmt.Errorf("vmnet: list links: %w", err)
	}
	var out []Attachment
	for _, l := range links {
		at, ok := m.fromLink(l)
		if ok {
			out = append(out, at)
		}
	}
	slices.SortFunc(out, func(a, b Attachment) int { return a.Slot - b.Slot })
	return out, nil
}

func (m *Manager) fromLink(l netlink.Link) (Attachment, bool) {
	al, name := l.Attrs().Alias, l.Attrs().Name
	if !strings.HasPrefix(al, alias) || !strings.HasPrefix(name, "vfh") {
		return Attachment{}, false
	}
	a, err := netip.ParseAddr(strings.TrimPrefix(al, alias))
	if err != nil {
		return Attachment{}, false
	}
	n, err := strconv.Atoi(strings.TrimPrefix(name, "vfh"))
	if err != nil || n < 0 || n >= MaxSlots {
		return Attachment{}, false
	}
	at := Attachment{Addr: a, Slot: n, Namespace: m.Namespace(a), NSAddr: SlotAddr(n), Tap: TapName(n)}
	if _, err := m.h.LinkByName(at.Tap); err != nil {
		at.TapInNS = true // no longer in the node's namespace (moved), or not made yet
		if fd, err := netns.GetFromName(at.Namespace); err == nil {
			if h, err := netlink.NewHandleAt(fd); err == nil {
				_, err = h.LinkByName(at.Tap)
				at.TapInNS = err == nil
				h.Close()
			}
			fd.Close()
		}
	}
	return at, true
}

// Lookup returns the attachment of VM address a, if the node has one.
func (m *Manager) Lookup(a netip.Addr) (Attachment, bool, error) {
	l, err := m.hostLinkOf(a)
	if err != nil || l == nil {
		return Attachment{}, false, err
	}
	at, ok := m.fromLink(l)
	return at, ok, nil
}

func (m *Manager) hostLinkOf(a netip.Addr) (netlink.Link, error) {
	links, err := m.h.LinkList()
	if err != nil {
		return nil, fmt.Errorf("vmnet: list links: %w", err)
	}
	for _, l := range links {
		if l.Attrs().Alias == alias+a.String() && strings.HasPrefix(l.Attrs().Name, "vfh") {
			return l, nil
		}
	}
	return nil, nil
}

// Ensure makes VM address a's namespace, veth pair and routes exist (idempotent) and returns
// its attachment. The address keeps its slot for as long as its namespace exists.
func (m *Manager) Ensure(a netip.Addr) (Attachment, error) {
	if !a.Is4() || a.IsLoopback() || a.IsUnspecified() || SlotRange.Contains(a) || a.IsLinkLocalUnicast() {
		return Attachment{}, fmt.Errorf("vmnet: %v is no routable IPv4 VM address", a)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	l, err := m.hostLinkOf(a)
	if err != nil {
		return Attachment{}, err
	}
	slot := -1
	if l != nil {
		slot, _ = strconv.Atoi(strings.TrimPrefix(l.Attrs().Name, "vfh"))
	} else if slot, err = m.freeSlot(); err != nil {
		return Attachment{}, err
	}
	at := Attachment{Addr: a, Slot: slot, Namespace: m.Namespace(a), NSAddr: SlotAddr(slot), Tap: TapName(slot)}
	ns, err := m.ensureNamespace(at.Namespace)
	if err != nil {
		return at, err
	}
	defer ns.Close()
	nh, err := netlink.NewHandleAt(ns)
	if err != nil {
		return at, fmt.Errorf("vmnet: netlink in %s: %w", at.Namespace, err)
	}
	defer nh.Close()
	if l == nil {
		veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: HostIf(slot)}, PeerName: NSIf(slot), PeerNamespace: netlink.NsFd(ns)}
		if err := m.h.LinkAdd(veth); err != nil {
			return at, fmt.Errorf("vmnet: veth %s: %w", HostIf(slot), err)
		}
		if l, err = m.h.LinkByName(HostIf(slot)); err != nil {
			return at, err
		}
		if err := m.h.LinkSetAlias(l, alias+a.String()); err != nil {
			_ = m.h.LinkDel(l)
			return at, fmt.Errorf("vmnet: mark %s: %w", HostIf(slot), err)
		}
	}
	if err := m.h.LinkSetUp(l); err != nil {
		return at, fmt.Errorf("vmnet: %s up: %w", HostIf(slot), err)
	}
	if err := inNS(m.cfg.HostNS, func() error {
		return sysctl("net/ipv4/conf/"+HostIf(slot)+"/rp_filter", "1")
	}); err != nil {
		return at, err
	}
	// Namespace side: lo and the veth up, the slot address, default via the gateway.
	nl, err := nh.LinkByName(NSIf(slot))
	if err != nil {
		return at, fmt.Errorf("vmnet: %s in %s: %w", NSIf(slot), at.Namespace, err)
	}
	if lo, err := nh.LinkByName("lo"); err == nil {
		_ = nh.LinkSetUp(lo)
	}
	if err := nh.AddrReplace(nl, addr32(at.NSAddr)); err != nil {
		return at, fmt.Errorf("vmnet: address of %s: %w", at.Namespace, err)
	}
	if err := nh.LinkSetUp(nl); err != nil {
		return at, err
	}
	if err := nh.RouteReplace(&netlink.Route{LinkIndex: nl.Attrs().Index, Dst: prefixNet(netip.MustParsePrefix("0.0.0.0/0")),
		Gw: Gateway.AsSlice(), Flags: int(netlink.FLAG_ONLINK)}); err != nil {
		return at, fmt.Errorf("vmnet: default route in %s: %w", at.Namespace, err)
	}
	if err := inNS(ns, func() error { return sysctl("net/ipv4/ip_forward", "1") }); err != nil {
		return at, err
	}
	// Node side: the slot address and the VM address routed into the namespace.
	if err := m.h.RouteReplace(&netlink.Route{LinkIndex: l.Attrs().Index, Dst: prefixNet(netip.PrefixFrom(at.NSAddr, 32)), Scope: netlink.SCOPE_LINK}); err != nil {
		return at, fmt.Errorf("vmnet: route to %v: %w", at.NSAddr, err)
	}
	if err := m.h.RouteReplace(&netlink.Route{LinkIndex: l.Attrs().Index, Dst: prefixNet(netip.PrefixFrom(a, 32)), Gw: at.NSAddr.AsSlice()}); err != nil {
		return at, fmt.Errorf("vmnet: route to %v: %w", a, err)
	}
	at.TapInNS = m.tapInNS(nh, at)
	if at.TapInNS {
		if err := m.configureTap(ns, nh, at); err != nil {
			return at, err
		}
	}
	return at, nil
}

func (m *Manager) tapInNS(nh *netlink.Handle, at Attachment) bool {
	_, err := nh.LinkByName(at.Tap)
	return err == nil
}

// AttachTap moves the VM NIC's tap (TapName(slot), made by the hypervisor in the node's
// namespace) into a's namespace, brings it up with proxy ARP and strict reverse-path
// filtering, and routes a to it. It is idempotent: a tap already moved is only configured.
func (m *Manager) AttachTap(a netip.Addr) (Attachment, error) {
	at, err := m.Ensure(a)
	if err != nil {
		return at, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	ns, err := netns.GetFromName(at.Namespace)
	if err != nil {
		return at, fmt.Errorf("vmnet: namespace %s: %w", at.Namespace, err)
	}
	defer ns.Close()
	nh, err := netlink.NewHandleAt(ns)
	if err != nil {
		return at, err
	}
	defer nh.Close()
	if !m.tapInNS(nh, at) {
		t, err := m.h.LinkByName(at.Tap)
		if err != nil {
			return at, fmt.Errorf("vmnet: tap %s of %v: %w", at.Tap, a, err)
		}
		if err := m.h.LinkSetNsFd(t, int(ns)); err != nil {
			return at, fmt.Errorf("vmnet: move %s into %s: %w", at.Tap, at.Namespace, err)
		}
	}
	at.TapInNS = true
	return at, m.configureTap(ns, nh, at)
}

func (m *Manager) configureTap(ns netns.NsHandle, nh *netlink.Handle, at Attachment) error {
	t, err := nh.LinkByName(at.Tap)
	if err != nil {
		return fmt.Errorf("vmnet: tap %s: %w", at.Tap, err)
	}
	if err := nh.LinkSetUp(t); err != nil {
		return fmt.Errorf("vmnet: tap %s up: %w", at.Tap, err)
	}
	if err := inNS(ns, func() error {
		return errors.Join(
			sysctl("net/ipv4/conf/"+at.Tap+"/proxy_arp", "1"),
			sysctl("net/ipv4/conf/"+at.Tap+"/rp_filter", "1"))
	}); err != nil {
		return err
	}
	if err := nh.RouteReplace(&netlink.Route{LinkIndex: t.Attrs().Index, Dst: prefixNet(netip.PrefixFrom(at.Addr, 32)), Scope: netlink.SCOPE_LINK}); err != nil {
		return fmt.Errorf("vmnet: route to %v in %s: %w", at.Addr, at.Namespace, err)
	}
	return nil
}

// Remove deletes VM address a's routes, veth pair and namespace (the tap in it goes with
// it). Removing an address the node does not have does nothing.
func (m *Manager) Remove(a netip.Addr) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, err := m.hostLinkOf(a)
	if err != nil {
		return err
	}
	var errs []error
	if l != nil {
		// Deleting the veth removes the routes through it.
		if err := m.h.LinkDel(l); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("vmnet: delete %s: %w", l.Attrs().Name, err))
		}
	}
	name := m.Namespace(a)
	if _, err := os.Stat(filepath.Join("/var/run/netns", name)); err == nil {
		if err := netns.DeleteNamed(name); err != nil {
			errs = append(errs, fmt.Errorf("vmnet: delete namespace %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// Prune removes every attachment whose address is not in keep and returns those removed.
func (m *Manager) Prune(keep []netip.Addr) ([]netip.Addr, error) {
	ats, err := m.List()
	if err != nil {
		return nil, err
	}
	var removed []netip.Addr
	var errs []error
	for _, at := range ats {
		if slices.Contains(keep, at.Addr) {
			continue
		}
		if err := m.Remove(at.Addr); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, at.Addr)
	}
	return removed, errors.Join(errs...)
}

func (m *Manager) freeSlot() (int, error) {
	links, err := m.h.LinkList()
	if err != nil {
		return 0, err
	}
	used := map[int]bool{}
	for _, l := range links {
		if n, err := strconv.Atoi(strings.TrimPrefix(l.Attrs().Name, "vfh")); err == nil && strings.HasPrefix(l.Attrs().Name, "vfh") {
			used[n] = true
		}
	}
	for n := range MaxSlots {
		if !used[n] {
			return n, nil
		}
	}
	return 0, fmt.Errorf("vmnet: all %d slots of %v in use", MaxSlots, SlotRange)
}

// ensureNamespace opens the named namespace, creating it when missing.
func (m *Manager) ensureNamespace(name string) (netns.NsHandle, error) {
	if ns, err := netns.GetFromName(name); err == nil {
		return ns, nil
	}
	var ns netns.NsHandle
	err := onThread(func() error {
		var err error
		ns, err = netns.NewNamed(name) // switches this thread into it; onThread restores
		return err
	})
	if err != nil {
		return netns.None(), fmt.Errorf("vmnet: create namespace %s: %w", name, err)
	}
	return ns, nil
}

// onThread runs fn on a locked OS thread and puts the thread back into its original network
// namespace afterwards (a thread that cannot go back is discarded by the runtime).
func onThread(fn func() error) error {
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
		ferr := fn()
		if err := netns.Set(orig); err != nil {
			errc <- errors.Join(ferr, err) // leave the thread locked: it dies with the goroutine
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// inNS runs fn on a thread inside ns.
func inNS(ns netns.NsHandle, fn func() error) error {
	return onThread(func() error {
		if err := netns.Set(ns); err != nil {
			return err
		}
		return fn()
	})
}

// sysctl writes a /proc/sys/net value for the calling thread's network namespace.
func sysctl(key, value string) error {
	if err := os.WriteFile("/proc/sys/"+key, []byte(value), 0); err != nil {
		return fmt.Errorf("vmnet: sysctl %s: %w", key, err)
	}
	return nil
}

func addr32(a netip.Addr) *netlink.Addr {
	return &netlink.Addr{IPNet: prefixNet(netip.PrefixFrom(a, 32))}
}

func prefixNet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}

func isNotFound(err error) bool {
	var nf netlink.LinkNotFoundError
	return errors.As(err, &nf) || errors.Is(err, os.ErrNotExist)
}
