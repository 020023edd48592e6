package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/virtflow/virtflow/agent/bgp"
	"github.com/virtflow/virtflow/agent/vmnet"
)

// Network modes (Config.NetworkMode).
const (
	// NetworkBridged plugs each NIC into its network's bridge (or a libvirt network): the
	// operator's network carries the VMs' addresses.
	NetworkBridged = "bridged"
	// NetworkRouted realizes seed 001's L3 design (package vmnet): every VM address gets a
	// namespace of its own and a /32 route on the node, which the agent announces to the
	// node's BGP peers (package bgp).
	NetworkRouted = "routed"
)

// RoutedNetwork realizes the namespaces of the node's VM addresses: *vmnet.Manager.
type RoutedNetwork interface {
	Setup() error
	Ensure(a netip.Addr) (vmnet.Attachment, error)
	AttachTap(a netip.Addr) (vmnet.Attachment, error)
	Lookup(a netip.Addr) (vmnet.Attachment, bool, error)
	Remove(a netip.Addr) error
	List() ([]vmnet.Attachment, error)
	ApplyACL(a netip.Addr, rules []vmnet.Rule) error
}

// BGPConfig is the node's BGP speaker in routed mode. The ASN, router id and peers come
// from the graph (ComputeNode.bgp: the node's host record and the rack-leaf routers it is
// cabled to) unless set here.
type BGPConfig struct {
	// ASN and RouterID override the host record's bgpAsn and bgpAddress.
	ASN      uint32
	RouterID netip.Addr
	// Peers, when set, are used instead of the graph's.
	Peers []bgp.Peer
	// ListenPort is the speaker's port: -1 (default 0 means -1 here) does not listen.
	ListenPort int32
	// HoldTime is the proposed hold time (bgp.Config.HoldTime).
	HoldTime time.Duration
	// Refresh is how often the peers are read again from the graph (default 1 minute).
	Refresh time.Duration
	// Speaker, when set, is used instead of a speaker of the agent's own (tests run one in
	// the node's namespace with bgptest; GoBGP's sessions follow the process's namespace).
	Speaker bgp.Announcer
}

// routedOwner is the owner of the VM addresses in the announcement table.
const routedOwner = "vm"

// Announcer returns the Announcer through which owner (e.g. "lb" for the load balancers
// the node serves) announces its prefixes from this node: they go to the node's BGP peers
// with the VMs' /32s, as soon as the speaker runs (announcements made before are kept and
// sent then). Without a speaker (bridged mode, no peers) nothing is sent anywhere.
func (ag *Agent) Announcer(owner string) bgp.Announcer { return ag.routes.For(owner) }

// Announcements lists what the node announces (or will, once its speaker runs).
func (ag *Agent) Announcements() []bgp.Entry { return ag.routes.Entries() }

func (ag *Agent) routed() bool { return ag.cfg.NetworkMode == NetworkRouted && ag.cfg.Routed != nil }

// vmNet is what routed mode knows of a VM's network: its ports' first IPv4 address by
// MAC, its addresses in port order, and its ACL rules.
type vmNet struct {
	byMAC map[string]netip.Addr
	addrs []netip.Addr
	rules []vmnet.Rule
}

// vmNetwork reads a's VM's addresses and rules (vmNetwork query) and remembers them, so that
// the addresses can still be withdrawn once the VM is no longer readable (moved away).
func (ag *Agent) vmNetwork(ctx context.Context, a Assignment) (vmNet, error) {
	if a.VirtualMachine == nil {
		return ag.cachedNet(a), nil
	}
	out, err := vmNetwork(ctx, ag.api, a.VirtualMachine.Id)
	if err != nil {
		return vmNet{}, fmt.Errorf("read the VM's addresses and rules: %w", err)
	}
	var vm *vmNetworkNodeVirtualMachine
	if out.Node != nil {
		vm, _ = (*out.Node).(*vmNetworkNodeVirtualMachine)
	}
	if vm == nil {
		return ag.cachedNet(a), nil
	}
	n := vmNet{byMAC: map[string]netip.Addr{}}
	for _, e := range vm.Ports.Edges {
		if e == nil || e.Node == nil || e.Node.Mac == nil {
			continue
		}
		for _, ie := range e.Node.IpAddresses.Edges {
			if ie == nil || ie.Node == nil {
				continue
			}
			if ad, err := netip.ParseAddr(ie.Node.Address); err == nil && ad.Is4() {
				n.byMAC[strings.ToLower(*e.Node.Mac)] = ad
				if !slices.Contains(n.addrs, ad) {
					n.addrs = append(n.addrs, ad)
				}
				break
			}
		}
	}
	for _, e := range vm.SecurityRules.Edges {
		if e == nil || e.Node == nil {
			continue
		}
		r := e.Node
		rule := vmnet.Rule{Direction: vmnet.Direction(r.Direction), Protocol: string(r.Protocol),
			Allow: r.Action == SecurityRuleActionAllow, Priority: r.Priority}
		if r.PortFrom != nil {
			rule.PortFrom = *r.PortFrom
		}
		if r.PortTo != nil {
			rule.PortTo = *r.PortTo
		}
		if p, err := netip.ParsePrefix(r.Cidr); err == nil {
			rule.CIDR = p
		}
		n.rules = append(n.rules, rule)
	}
	if id, ok, _ := assignedVM(a); ok {
		ag.mu.Lock()
		ag.nets[id] = n
		ag.mu.Unlock()
	}
	return n, nil
}

// cachedNet is what vmNetwork last read of a's VM (empty when nothing).
func (ag *Agent) cachedNet(a Assignment) vmNet {
	id, ok, _ := assignedVM(a)
	if !ok {
		return vmNet{}
	}
	ag.mu.Lock()
	defer ag.mu.Unlock()
	return ag.nets[id]
}

// routedNICs reserves the slot of each address of a's VM (vmnet.Ensure) and returns the
// tap of each NIC with an address, by MAC.
func (ag *Agent) routedNICs(ctx context.Context, a Assignment) (map[string]string, error) {
	n, err := ag.vmNetwork(ctx, a)
	if err != nil {
		return nil, err
	}
	taps := map[string]string{}
	for mac, ad := range n.byMAC {
		at, err := ag.cfg.Routed.Ensure(ad)
		if err != nil {
			return nil, err
		}
		taps[mac] = at.Tap
	}
	return taps, nil
}

// routeUp realizes the routed network of a's running VM: each address's namespace, its tap
// moved in, its ACL, and its /32 announced. An address whose tap is missing is not
// announced (nothing would answer) and makes the error.
func (ag *Agent) routeUp(ctx context.Context, a Assignment) ([]routeState, error) {
	var out []routeState
	var errs []error
	n, err := ag.vmNetwork(ctx, a)
	if err != nil {
		return nil, err
	}
	for _, ad := range n.addrs {
		at, err := ag.cfg.Routed.AttachTap(ad)
		st := routeState{Address: ad, Namespace: at.Namespace, Link: at.NSAddr}
		if err == nil {
			err = ag.cfg.Routed.ApplyACL(ad, n.rules)
		}
		if err == nil {
			err = ag.routes.For(routedOwner).Announce(netip.PrefixFrom(ad, 32), netip.Addr{})
			st.Announced = err == nil && ag.speakerUp()
		} else {
			_ = ag.routes.For(routedOwner).Withdraw(netip.PrefixFrom(ad, 32))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("routed address %v: %w", ad, err))
		}
		out = append(out, st)
	}
	return out, errors.Join(errs...)
}

// routeDown withdraws a's VM's addresses and removes their namespaces.
func (ag *Agent) routeDown(a Assignment) []routeState {
	var out []routeState
	for _, ad := range ag.cachedNet(a).addrs {
		_ = ag.routes.For(routedOwner).Withdraw(netip.PrefixFrom(ad, 32))
		if err := ag.cfg.Routed.Remove(ad); err != nil {
			ag.log.Warn("cannot remove the namespace of a VM address", "address", ad, "err", err)
		}
		out = append(out, routeState{Address: ad})
	}
	return out
}

// withdrawAll withdraws a's VM's addresses (before the domain stops or goes).
func (ag *Agent) withdrawAll(a Assignment) {
	for _, ad := range ag.cachedNet(a).addrs {
		_ = ag.routes.For(routedOwner).Withdraw(netip.PrefixFrom(ad, 32))
	}
}

// pruneRoutes withdraws and removes the namespaces of addresses no running VM of the node
// has (a VM moved away, deleted, or its address released).
func (ag *Agent) pruneRoutes(ctx context.Context, as []Assignment) {
	if !ag.routed() {
		return
	}
	var keep []netip.Addr
	for _, a := range as {
		if a.DesiredState != AssignmentDesiredStateRunning {
			continue
		}
		n := ag.cachedNet(a)
		if n.byMAC == nil {
			var err error
			if n, err = ag.vmNetwork(ctx, a); err != nil {
				ag.log.Warn("cannot prune the routed network", "err", err)
				return // not knowing what to keep, keep everything
			}
		}
		keep = append(keep, n.addrs...)
	}
	for _, p := range ag.routes.Owned(routedOwner) {
		if !slices.Contains(keep, p.Addr()) {
			_ = ag.routes.For(routedOwner).Withdraw(p)
		}
	}
	ats, err := ag.cfg.Routed.List()
	if err != nil {
		ag.log.Warn("cannot list the VM addresses' namespaces", "err", err)
		return
	}
	for _, at := range ats {
		if slices.Contains(keep, at.Addr) {
			continue
		}
		_ = ag.routes.For(routedOwner).Withdraw(netip.PrefixFrom(at.Addr, 32))
		if err := ag.cfg.Routed.Remove(at.Addr); err != nil {
			ag.log.Warn("cannot remove the namespace of a VM address", "address", at.Addr, "err", err)
		} else {
			ag.log.Info("removed the namespace of an address no VM of the node has", "address", at.Addr)
		}
	}
}

// routeState is one address's route as reported.
type routeState struct {
	Address   netip.Addr
	Namespace string
	Link      netip.Addr
	Announced bool
}

// encodeRoutes makes the comparable form AssignmentReport carries:
// "address|namespace|link|announced" joined by ";".
func encodeRoutes(rs []routeState) string {
	parts := make([]string, 0, len(rs))
	for _, r := range rs {
		link := ""
		if r.Link.IsValid() {
			link = r.Link.String()
		}
		parts = append(parts, strings.Join([]string{r.Address.String(), r.Namespace, link, strconv.FormatBool(r.Announced)}, "|"))
	}
	return strings.Join(parts, ";")
}

func decodeRoutes(s string) []VMRouteInput {
	out := []VMRouteInput{}
	if s == "" {
		return out
	}
	for _, p := range strings.Split(s, ";") {
		f := strings.Split(p, "|")
		if len(f) != 4 {
			continue
		}
		out = append(out, VMRouteInput{Address: f[0], Namespace: f[1], LinkAddress: f[2], Announced: f[3] == "true"})
	}
	return out
}

// speakerUp reports whether a BGP speaker is attached (announcements leave the node).
func (ag *Agent) speakerUp() bool {
	ag.mu.Lock()
	defer ag.mu.Unlock()
	return ag.speaker != nil
}

// runBGP keeps the node's speaker running with the peers of the graph (or Config.BGP's),
// replacing it when they change, until ctx ends.
func (ag *Agent) runBGP(ctx context.Context) {
	if s := ag.cfg.BGP.Speaker; s != nil {
		if err := ag.routes.Attach(s); err != nil {
			ag.log.Warn("announce", "err", err)
		}
		ag.mu.Lock()
		ag.speaker = s
		ag.mu.Unlock()
		<-ctx.Done()
		ag.routes.Detach()
		return
	}
	refresh := ag.cfg.BGP.Refresh
	if refresh <= 0 {
		refresh = time.Minute
	}
	var cur *bgp.Speaker
	var curKey string
	stop := func() {
		if cur != nil {
			ag.routes.Detach()
			ag.mu.Lock()
			ag.speaker = nil
			ag.mu.Unlock()
			_ = cur.Close()
			cur = nil
		}
	}
	defer stop()
	for {
		cfg, err := ag.SpeakerConfig(ctx)
		if err != nil && ctx.Err() == nil {
			ag.log.Warn("cannot read the node's BGP peers", "err", err)
		}
		if err == nil {
			key := fmt.Sprint(cfg.ASN, cfg.RouterID, cfg.Peers)
			if key != curKey || cur == nil {
				stop()
				if len(cfg.Peers) == 0 {
					ag.log.Warn("routed mode without BGP peers: the VMs' addresses are not announced")
				} else if s, err := bgp.New(cfg); err != nil {
					ag.log.Warn("BGP speaker", "err", err)
				} else if err := s.Start(ctx); err != nil {
					ag.log.Warn("BGP speaker", "err", err)
				} else {
					cur = s
					if err := ag.routes.Attach(s); err != nil {
						ag.log.Warn("announce", "err", err)
					}
					ag.mu.Lock()
					ag.speaker = s
					ag.mu.Unlock()
					ag.log.Info("BGP speaker running", "asn", cfg.ASN, "router_id", cfg.RouterID, "peers", fmt.Sprint(cfg.Peers))
				}
				curKey = key
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(refresh):
		}
	}
}

// SpeakerConfig is the speaker's configuration: Config.BGP over the graph's ComputeNode.bgp.
func (ag *Agent) SpeakerConfig(ctx context.Context) (bgp.Config, error) {
	c := ag.cfg.BGP
	cfg := bgp.Config{ASN: c.ASN, RouterID: c.RouterID, Peers: c.Peers, ListenPort: c.ListenPort, HoldTime: c.HoldTime, Logger: ag.log}
	if cfg.ListenPort == 0 {
		cfg.ListenPort = -1
	}
	if cfg.ASN != 0 && cfg.RouterID.IsValid() && len(cfg.Peers) > 0 {
		return cfg, nil
	}
	out, err := nodeBGP(ctx, ag.api, ag.NodeID())
	if err != nil {
		return cfg, err
	}
	var n *nodeBGPNodeComputeNode
	if out.Node != nil {
		n, _ = (*out.Node).(*nodeBGPNodeComputeNode)
	}
	if n == nil {
		return cfg, errors.New("the node's BGP settings are not readable")
	}
	b := n.Bgp
	if cfg.ASN == 0 && b.Asn > 0 {
		cfg.ASN = uint32(b.Asn)
	}
	if !cfg.RouterID.IsValid() && b.RouterID != nil {
		cfg.RouterID, _ = netip.ParseAddr(*b.RouterID)
	}
	if len(cfg.Peers) == 0 {
		for _, p := range b.Peers {
			ad, err := netip.ParseAddr(p.Address)
			if err != nil {
				continue
			}
			cfg.Peers = append(cfg.Peers, bgp.Peer{Address: ad, ASN: uint32(p.Asn), BFD: p.Bfd})
		}
	}
	if len(b.Missing) > 0 {
		ag.log.Warn("rack-leaf routers without bgpAsn/bgpAddress are not peered with", "routers", b.Missing)
	}
	if cfg.ASN == 0 || !cfg.RouterID.IsValid() {
		return cfg, fmt.Errorf("the node's host has no bgpAsn/bgpAddress (and none is configured)")
	}
	return cfg, nil
}

// serveMetadata serves the metadata service (vmnet.NewMetadataHandler) on l to the node's
// VMs until ctx ends.
func (ag *Agent) serveMetadata(ctx context.Context, l net.Listener) {
	h := vmnet.NewMetadataHandler(vmnet.MetadataConfig{
		Lookup:   ag.instanceByAddress,
		ReadyURL: GuestReadyURL("", ag.cfg.APIURL),
		Client:   ag.cfg.HTTPClient,
	})
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { <-ctx.Done(); _ = srv.Close() }()
	if err := srv.Serve(l); err != nil && ctx.Err() == nil {
		ag.log.Warn("metadata service stopped", "err", err)
	}
}

// instanceByAddress finds the running VM of this node that owns address a.
func (ag *Agent) instanceByAddress(a netip.Addr) (vmnet.Instance, bool) {
	ag.mu.Lock()
	defer ag.mu.Unlock()
	inst, ok := ag.instances[a]
	return inst, ok
}

// rememberInstance records (or with up false forgets) a's VM as the owner of its addresses
// for the metadata service.
func (ag *Agent) rememberInstance(a Assignment, up bool) {
	if a.VirtualMachine == nil {
		return
	}
	addrs := ag.cachedNet(a).addrs
	ag.mu.Lock()
	defer ag.mu.Unlock()
	for _, ad := range addrs {
		if up {
			ag.instances[ad] = vmnet.Instance{VMID: a.VirtualMachine.Id, Name: a.VirtualMachine.Name, Node: ag.nodeID, Addresses: addrs}
		} else {
			delete(ag.instances, ad)
		}
	}
}

// routeReport realizes (RUNNING) or removes (otherwise) the routed network of a's VM and puts
// the routes into r. A failure to realize it is logged and tried again next resync; the
// report then says which address is not announced.
func (ag *Agent) routeReport(ctx context.Context, a Assignment, r *AssignmentReport) {
	if a.VirtualMachine == nil && a.VmID == nil {
		return
	}
	var rs []routeState
	if a.DesiredState == AssignmentDesiredStateRunning {
		var err error
		rs, err = ag.routeUp(ctx, a)
		if err != nil {
			ag.log.Warn("routed network of the VM", "assignment", a.Id, "err", err)
		}
		ag.rememberInstance(a, true)
	} else {
		rs = ag.routeDown(a)
		ag.rememberInstance(a, false)
	}
	r.Routes, r.RouteList = true, encodeRoutes(rs)
}

// ParseBGPPeers parses --bgp-peers: comma-separated address:asn, or address:asn:bfd for a
// peer that offers BFD. Empty gives none (the graph's peers are used).
func ParseBGPPeers(s string) ([]bgp.Peer, error) {
	var out []bgp.Peer
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		f := strings.Split(item, ":")
		if len(f) < 2 || len(f) > 3 || (len(f) == 3 && f[2] != "bfd") {
			return nil, fmt.Errorf("peer %q: want address:asn or address:asn:bfd", item)
		}
		ad, err := netip.ParseAddr(f[0])
		if err != nil {
			return nil, fmt.Errorf("peer %q: %w", item, err)
		}
		asn, err := strconv.ParseUint(f[1], 10, 32)
		if err != nil || asn == 0 {
			return nil, fmt.Errorf("peer %q: ASN %q", item, f[1])
		}
		out = append(out, bgp.Peer{Address: ad, ASN: uint32(asn), BFD: len(f) == 3})
	}
	return out, nil
}
