package ipam

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/hook"
	"github.com/virtflow/virtflow/ent/ipaddress"
	"github.com/virtflow/virtflow/ent/network"
	"github.com/virtflow/virtflow/store/rowlock"
)

// Usable reports why addr cannot be a host address of prefix, or nil: it must lie inside the
// prefix and, in IPv4 prefixes of /30 and wider, be neither the network nor the broadcast
// address; in IPv6 prefixes of /126 and wider it must not be the subnet-router anycast address
// (all host bits zero, RFC 4291 2.6.1), which every router of the link answers. IPv6 /127 (RFC
// 6164) and /128 use every address.
func Usable(prefix netip.Prefix, addr netip.Addr) error {
	if !prefix.Contains(addr) {
		return fmt.Errorf("%s is outside %s", addr, prefix)
	}
	if addr.Is6() && prefix.Bits() <= 126 && addr == prefix.Masked().Addr() {
		return fmt.Errorf("%s is the subnet-router anycast address of %s", addr, prefix)
	}
	if addr.Is4() && prefix.Bits() <= 30 {
		if addr == prefix.Addr() {
			return fmt.Errorf("%s is the network address of %s", addr, prefix)
		}
		if addr == Broadcast(prefix) {
			return fmt.Errorf("%s is the broadcast address of %s", addr, prefix)
		}
	}
	return nil
}

// Broadcast returns the last address of an IPv4 prefix.
func Broadcast(p netip.Prefix) netip.Addr {
	a := p.Masked().Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	v |= host
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// NetworkHook keeps a network's gateway a usable address of its prefix, refuses a prefix that
// overlaps another network's in the same routing scope (see checkScope), and refuses to
// change a prefix so that existing addresses or reserved ranges would fall outside it.
func NetworkHook() ent.Hook {
	return hook.On(func(next ent.Mutator) ent.Mutator {
		return hook.NetworkFunc(func(ctx context.Context, m *ent.NetworkMutation) (ent.Value, error) {
			cidr, cidrSet := m.Cidr()
			gw, gwSet := m.Gateway()
			vrf, vrfSet := m.Vrf()
			if !cidrSet && !gwSet && !vrfSet {
				return next.Mutate(ctx, m)
			}
			if m.Op().Is(ent.OpUpdate) {
				return nil, apierr.Validation("cidr", "prefix, gateway and vrf can only be changed one network at a time")
			}
			var self int
			if m.Op().Is(ent.OpUpdateOne) {
				self, _ = m.ID()
				old, err := m.Client().Network.Get(authz.Unrestricted(ctx), self)
				if err != nil {
					return nil, err
				}
				if !cidrSet {
					cidr = old.Cidr
				}
				if !gwSet && !m.GatewayCleared() {
					gw = old.Gateway
				}
				if !vrfSet {
					vrf = old.Vrf
				}
			}
			if vrf == "" {
				vrf = DefaultVRF
			}
			prefix, err := netip.ParsePrefix(cidr)
			if err != nil {
				return nil, apierr.Validation("cidr", "not a CIDR prefix")
			}
			if gw != "" {
				addr, err := netip.ParseAddr(gw)
				if err != nil {
					return nil, apierr.Validation("gateway", "not an IP address")
				}
				if err := Usable(prefix, addr); err != nil {
					return nil, apierr.Validation("gateway", "%v", err)
				}
			}
			if cidrSet || vrfSet {
				if err := checkScope(ctx, m.Client(), self, vrf, prefix); err != nil {
					return nil, err
				}
			}
			if cidrSet && m.Op().Is(ent.OpUpdateOne) {
				if err := addressesInside(authz.Unrestricted(ctx), m, prefix); err != nil {
					return nil, err
				}
			}
			return next.Mutate(ctx, m)
		})
	}, ent.OpCreate|ent.OpUpdate|ent.OpUpdateOne)
}

// addressesInside checks that the network's addresses and reserved ranges fit prefix. It
// locks the network's row first, so no allocation can add an address between the check and
// the update.
func addressesInside(ctx context.Context, m *ent.NetworkMutation, prefix netip.Prefix) error {
	id, _ := m.ID()
	if _, err := m.Client().Network.Query().Where(network.ID(id)).Modify(rowlock.ForUpdate).Only(ctx); err != nil {
		return fmt.Errorf("lock network %d: %w", id, err)
	}
	addrs, err := m.Client().IPAddress.Query().Where(ipaddress.HasNetworkWith(network.ID(id))).
		Select(ipaddress.FieldAddress).Strings(ctx)
	if err != nil {
		return fmt.Errorf("list addresses of network %d: %w", id, err)
	}
	for _, s := range addrs {
		if a, err := netip.ParseAddr(s); err == nil && Usable(prefix, a) != nil {
			return apierr.Validation("cidr", "address %s of this network would fall outside %s", s, prefix)
		}
	}
	ranges, err := loadRanges(ctx, m.Client(), id, 0)
	if err != nil {
		return err
	}
	for _, r := range ranges {
		if Usable(prefix, r.First) != nil || Usable(prefix, r.Last) != nil {
			return apierr.Validation("cidr", "reserved range %s of this network would fall outside %s", r, prefix)
		}
	}
	return nil
}

// AddressHook keeps an address a usable host address of its network, in canonical form.
//
// It locks the network's row for the rest of the transaction, as Allocate and RangeHook do, so
// every write of a network's addresses within a transaction (createIPAddress, updateIPAddress,
// allocateIPAddress) takes its turn with the allocator instead of racing it.
func AddressHook() ent.Hook {
	return hook.On(func(next ent.Mutator) ent.Mutator {
		return hook.IPAddressFunc(func(ctx context.Context, m *ent.IPAddressMutation) (ent.Value, error) {
			addrStr, addrSet := m.Address()
			netID, netSet := m.NetworkID()
			if !addrSet && !netSet {
				return next.Mutate(ctx, m)
			}
			if m.Op().Is(ent.OpUpdate) {
				return nil, apierr.Validation("address", "addresses can only be changed one at a time")
			}
			if m.Op().Is(ent.OpUpdateOne) {
				id, _ := m.ID()
				old, err := m.Client().IPAddress.Query().Where(ipaddress.ID(id)).WithNetwork().Only(authz.Unrestricted(ctx))
				if err != nil {
					return nil, err
				}
				if !addrSet {
					addrStr = old.Address
				}
				if !netSet {
					netID = old.Edges.Network.ID
				}
			}
			addr, err := netip.ParseAddr(addrStr)
			if err != nil {
				return nil, apierr.Validation("address", "not an IP address")
			}
			n, err := lockNetwork(ctx, m.Client(), netID)
			if err != nil {
				return nil, err
			}
			prefix, err := netip.ParsePrefix(n.Cidr)
			if err != nil {
				return nil, fmt.Errorf("network %s has a bad prefix %q: %w", n.Name, n.Cidr, err)
			}
			if err := Usable(prefix, addr); err != nil {
				return nil, apierr.Validation("address", "%v", err)
			}
			if addrSet {
				m.SetAddress(addr.String())
			}
			return next.Mutate(ctx, m)
		})
	}, ent.OpCreate|ent.OpUpdate|ent.OpUpdateOne)
}

// lockedKey marks a context whose transaction already holds a network's row lock: Allocate
// sets it around its insert so that AddressHook does not read and lock the same row again.
type lockedKey struct{}

// withLocked returns ctx marked as holding the lock of network n.
func withLocked(ctx context.Context, n *ent.Network) context.Context {
	return context.WithValue(ctx, lockedKey{}, n)
}

// lockNetwork reads network id and locks its row for the rest of the transaction, or returns
// it at once when ctx says the transaction holds that lock already. A network that does not
// exist is VALIDATION on networkID.
func lockNetwork(ctx context.Context, client *ent.Client, id int) (*ent.Network, error) {
	if n, ok := ctx.Value(lockedKey{}).(*ent.Network); ok && n.ID == id {
		return n, nil
	}
	n, err := client.Network.Query().Where(network.ID(id)).Modify(rowlock.ForUpdate).Only(authz.Unrestricted(ctx))
	if ent.IsNotFound(err) {
		return nil, apierr.Validation("networkID", "network %d does not exist", id)
	}
	if err != nil {
		return nil, fmt.Errorf("lock network %d: %w", id, err)
	}
	return n, nil
}
