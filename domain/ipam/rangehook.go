package ipam

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/hook"
	"github.com/virtflow/virtflow/ent/iprange"
	"github.com/virtflow/virtflow/ent/network"
	"github.com/virtflow/virtflow/store/rowlock"
)

// RangeHook validates reserved ranges on create and update: both ends are IP addresses of the
// network's family and usable host addresses of its prefix (so never its network or
// broadcast address, see Usable), the start is not after the end, and the range overlaps no
// other range of the network. The addresses are stored in canonical form. Errors are
// VALIDATION naming startAddress, endAddress or networkID.
//
// It locks the network's row (PostgreSQL; SQLite runs one writer at a time), so two ranges
// written concurrently into one network cannot both pass the overlap check, and a range
// cannot appear under a running allocation (Allocate takes the same lock). Outside a
// transaction the lock ends with the statement; every GraphQL mutation runs in one.
//
// Addresses already recorded inside a new range stay as they are: a range keeps the allocator
// away from now on, it does not evict anyone.
func RangeHook() ent.Hook {
	return hook.On(func(next ent.Mutator) ent.Mutator {
		return hook.IPRangeFunc(func(ctx context.Context, m *ent.IPRangeMutation) (ent.Value, error) {
			startStr, startSet := m.StartAddress()
			endStr, endSet := m.EndAddress()
			netID, netSet := m.NetworkID()
			if !startSet && !endSet && !netSet {
				return next.Mutate(ctx, m)
			}
			if m.Op().Is(ent.OpUpdate) {
				return nil, apierr.Validation("startAddress", "reserved ranges can only be changed one at a time")
			}
			var self int
			if m.Op().Is(ent.OpUpdateOne) {
				self, _ = m.ID()
				old, err := m.Client().IPRange.Query().Where(iprange.ID(self)).WithNetwork().Only(authz.Unrestricted(ctx))
				if err != nil {
					return nil, err
				}
				if !startSet {
					startStr = old.StartAddress
				}
				if !endSet {
					endStr = old.EndAddress
				}
				if !netSet {
					netID = old.Edges.Network.ID
				}
			} else if !netSet {
				return nil, apierr.Validation("networkID", "a reserved range needs a network")
			}
			n, err := m.Client().Network.Query().Where(network.ID(netID)).Modify(rowlock.ForUpdate).Only(authz.Unrestricted(ctx))
			if ent.IsNotFound(err) {
				return nil, apierr.Validation("networkID", "network %d does not exist", netID)
			}
			if err != nil {
				return nil, fmt.Errorf("read network %d: %w", netID, err)
			}
			prefix, _, err := parseNetwork(n)
			if err != nil {
				return nil, err
			}
			first, err := rangeEnd("startAddress", startStr, n, prefix)
			if err != nil {
				return nil, err
			}
			last, err := rangeEnd("endAddress", endStr, n, prefix)
			if err != nil {
				return nil, err
			}
			if last.Less(first) {
				return nil, apierr.Validation("endAddress", "%s is before the start address %s", last, first)
			}
			r := Range{first, last}
			others, err := loadRanges(ctx, m.Client(), n.ID, self)
			if err != nil {
				return nil, err
			}
			for _, o := range others {
				if o.overlaps(r) {
					return nil, apierr.Validation("startAddress", "%s overlaps the reserved range %s of network %s", r, o, n.Name)
				}
			}
			if startSet {
				m.SetStartAddress(first.String())
			}
			if endSet {
				m.SetEndAddress(last.String())
			}
			return next.Mutate(ctx, m)
		})
	}, ent.OpCreate|ent.OpUpdate|ent.OpUpdateOne)
}

// rangeEnd parses one end of a reserved range of network n (the input field named field).
func rangeEnd(field, s string, n *ent.Network, prefix netip.Prefix) (netip.Addr, error) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, apierr.Validation(field, "%q is not an IP address", s)
	}
	if a.BitLen() != prefix.Addr().BitLen() {
		return netip.Addr{}, apierr.Validation(field, "%s is not of the address family of network %s (%s)", a, n.Name, prefix)
	}
	if err := Usable(prefix, a); err != nil {
		return netip.Addr{}, apierr.Validation(field, "%v", err)
	}
	return a, nil
}
