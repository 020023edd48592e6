package ipam

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/ipaddress"
	"github.com/virtflow/virtflow/ent/iprange"
	"github.com/virtflow/virtflow/ent/network"
)

// loadSpace reads what network n uses — its addresses and its reserved ranges, one query each
// — and describes it as a space. withStatus reads the status of every address too, which only
// counting needs (the allocator only needs to know an address is taken, and reading one
// column instead of two ent rows is what its time under the lock goes to). The reads ignore
// the viewer's read rights (authz.Unrestricted): an address the viewer may not see is taken
// all the same.
func loadSpace(ctx context.Context, client *ent.Client, n *ent.Network, withStatus bool) (*space, error) {
	prefix, gateway, err := parseNetwork(n)
	if err != nil {
		return nil, err
	}
	ranges, err := loadRanges(ctx, client, n.ID, 0)
	if err != nil {
		return nil, err
	}
	addrs, err := loadAddrs(ctx, client, n, withStatus)
	if err != nil {
		return nil, err
	}
	return newSpace(prefix, gateway, addrs, ranges), nil
}

// parseNetwork returns n's prefix and gateway (the zero Addr when it has none).
func parseNetwork(n *ent.Network) (netip.Prefix, netip.Addr, error) {
	prefix, err := netip.ParsePrefix(n.Cidr)
	if err != nil {
		return netip.Prefix{}, netip.Addr{}, fmt.Errorf("network %s has a bad prefix %q: %w", n.Name, n.Cidr, err)
	}
	var gateway netip.Addr
	if n.Gateway != "" {
		if gateway, err = netip.ParseAddr(n.Gateway); err != nil {
			return netip.Prefix{}, netip.Addr{}, fmt.Errorf("network %s has a bad gateway %q: %w", n.Name, n.Gateway, err)
		}
	}
	return prefix.Masked(), gateway, nil
}

// loadAddrs reads the addresses recorded in network n, with their status when withStatus is
// set (else all count as ALLOCATED).
func loadAddrs(ctx context.Context, client *ent.Client, n *ent.Network, withStatus bool) ([]usedAddr, error) {
	ctx = authz.Unrestricted(ctx)
	q := client.IPAddress.Query().Where(ipaddress.HasNetworkWith(network.ID(n.ID)))
	type row struct {
		Address string           `json:"address"`
		Status  ipaddress.Status `json:"status"`
	}
	var rows []row
	var err error
	if withStatus {
		err = q.Select(ipaddress.FieldAddress, ipaddress.FieldStatus).Scan(ctx, &rows)
	} else {
		var addrs []string
		addrs, err = q.Select(ipaddress.FieldAddress).Strings(ctx)
		rows = make([]row, len(addrs))
		for i, a := range addrs {
			rows[i].Address = a
		}
	}
	if err != nil {
		return nil, fmt.Errorf("list addresses of network %s: %w", n.Name, err)
	}
	out := make([]usedAddr, 0, len(rows))
	for _, r := range rows {
		a, err := netip.ParseAddr(r.Address)
		if err != nil {
			return nil, fmt.Errorf("network %s records %q, which is not an IP address", n.Name, r.Address)
		}
		out = append(out, usedAddr{addr: a, reserved: r.Status == ipaddress.StatusReserved})
	}
	return out, nil
}

// loadRanges reads the reserved ranges of network networkID, leaving out the range except
// (0: none), which an update is about to replace.
func loadRanges(ctx context.Context, client *ent.Client, networkID, except int) ([]Range, error) {
	q := client.IPRange.Query().Where(iprange.HasNetworkWith(network.ID(networkID)))
	if except != 0 {
		q.Where(iprange.IDNEQ(except))
	}
	rows, err := q.Select(iprange.FieldStartAddress, iprange.FieldEndAddress).All(authz.Unrestricted(ctx))
	if err != nil {
		return nil, fmt.Errorf("list reserved ranges of network %d: %w", networkID, err)
	}
	out := make([]Range, 0, len(rows))
	for _, r := range rows {
		first, err1 := netip.ParseAddr(r.StartAddress)
		last, err2 := netip.ParseAddr(r.EndAddress)
		if err1 != nil || err2 != nil || last.Less(first) || first.BitLen() != last.BitLen() {
			return nil, fmt.Errorf("reserved range %d of network %d is malformed: %q–%q", r.ID, networkID, r.StartAddress, r.EndAddress)
		}
		out = append(out, Range{first, last})
	}
	return out, nil
}
