package fabric

import (
	"context"
	"fmt"
	"net/netip"
	"slices"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/ent/port"
)

// BGPPeer is a rack-leaf router a node's host is cabled to, as its node agent peers with it.
type BGPPeer struct {
	Name    string // the router's host name
	ASN     int64
	Address string
	BFD     bool
}

// NodeBGP is how a compute node peers with the fabric (issue 27): its own ASN and address
// (the router id of its speaker) from its host record, and its peers.
type NodeBGP struct {
	ASN      *int64
	RouterID *string
	Peers    []BGPPeer
	// Missing names the rack-leaf routers the host is cabled to that lack bgpAsn or
	// bgpAddress: they cannot be peered with until an operator sets them.
	Missing []string
}

// PeersOfHost returns the BGP settings of the compute node on host h: the routers with role
// RACK_LEAF at the other end of the links of h's ports (each once, sorted by name). The
// caller decides who may see them: it reads with the client and context it is given, which
// must be allowed to read hosts, ports and links.
func PeersOfHost(ctx context.Context, c *ent.Client, h *ent.Host) (NodeBGP, error) {
	out := NodeBGP{ASN: h.BgpAsn, Peers: []BGPPeer{}, Missing: []string{}}
	if h.BgpAddress != "" {
		a := h.BgpAddress
		out.RouterID = &a
	}
	ports, err := c.Port.Query().Where(port.HasHostWith(host.ID(h.ID))).
		WithLinkA(func(q *ent.LinkQuery) { q.WithBPort(func(q *ent.PortQuery) { q.WithHost() }) }).
		WithLinkB(func(q *ent.LinkQuery) { q.WithAPort(func(q *ent.PortQuery) { q.WithHost() }) }).
		All(ctx)
	if err != nil {
		return out, fmt.Errorf("fabric: ports of host %d: %w", h.ID, err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		var far *ent.Port
		if l := p.Edges.LinkA; l != nil {
			far = l.Edges.BPort
		} else if l := p.Edges.LinkB; l != nil {
			far = l.Edges.APort
		}
		if far == nil || far.Edges.Host == nil {
			continue
		}
		r := far.Edges.Host
		if r.Role == nil || *r.Role != host.RoleRackLeaf || seen[r.ID] {
			continue
		}
		seen[r.ID] = true
		if _, err := netip.ParseAddr(r.BgpAddress); err != nil || r.BgpAsn == nil {
			out.Missing = append(out.Missing, r.Name)
			continue
		}
		out.Peers = append(out.Peers, BGPPeer{Name: r.Name, ASN: *r.BgpAsn, Address: r.BgpAddress, BFD: r.Bfd})
	}
	slices.SortFunc(out.Peers, func(a, b BGPPeer) int { return compareStrings(a.Name, b.Name) })
	slices.Sort(out.Missing)
	return out, nil
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
