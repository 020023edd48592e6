package vmnet

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"slices"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Direction of an ACL rule.
type Direction string

// Directions: Ingress is traffic to the VM, Egress traffic from it.
const (
	Ingress Direction = "INGRESS"
	Egress  Direction = "EGRESS"
)

// Rule is one ACL rule of a VM (the graph's SecurityRule): traffic of Direction matching
// Protocol ("ANY", "TCP", "UDP", "ICMP"), the port range PortFrom..PortTo (TCP/UDP; 0: any
// port) and the peer's CIDR is allowed (Allow) or dropped. Rules are tried in ascending
// Priority; the first that matches decides. A direction without rules lets everything
// through; a direction with rules drops what no rule allows. Replies of allowed connections
// always pass, and so does the VM's traffic to the metadata service.
type Rule struct {
	Direction Direction
	Protocol  string
	PortFrom  int
	PortTo    int
	CIDR      netip.Prefix
	Allow     bool
	Priority  int
}

// ACLTable is the nftables table (family ip) the ACL lives in, in the address's namespace.
const ACLTable = "virtflow_acl"

// ApplyACL replaces the ACL of VM address a (in its namespace, on its tap) by rules, in one
// nftables transaction. An empty rules removes the ACL (everything passes).
func (m *Manager) ApplyACL(a netip.Addr, rules []Rule) error {
	at, ok, err := m.Lookup(a)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("vmnet: %v has no namespace on this node", a)
	}
	for _, r := range rules {
		if err := r.validate(); err != nil {
			return err
		}
	}
	ns, err := netns.GetFromName(at.Namespace)
	if err != nil {
		return fmt.Errorf("vmnet: namespace %s: %w", at.Namespace, err)
	}
	defer ns.Close()
	c, err := nftables.New(nftables.WithNetNSFd(int(ns)))
	if err != nil {
		return fmt.Errorf("vmnet: nftables in %s: %w", at.Namespace, err)
	}
	defer c.CloseLasting()
	t := &nftables.Table{Name: ACLTable, Family: nftables.TableFamilyIPv4}
	// Add (so that the delete cannot fail), delete and build anew: one atomic batch.
	c.AddTable(t)
	c.DelTable(t)
	if len(rules) > 0 {
		c.AddTable(t)
		policy := nftables.ChainPolicyAccept
		ch := c.AddChain(&nftables.Chain{Name: "forward", Table: t, Type: nftables.ChainTypeFilter,
			Hooknum: nftables.ChainHookForward, Priority: nftables.ChainPriorityFilter, Policy: &policy})
		add := func(exprs ...expr.Any) { c.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: exprs}) }
		// Replies of allowed connections, and the guest's calls to the metadata service.
		add(&expr.Ct{Register: 1, Key: expr.CtKeySTATE},
			&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4,
				Mask: u32(expr.CtStateBitESTABLISHED | expr.CtStateBitRELATED), Xor: u32(0)},
			&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: u32(0)},
			&expr.Verdict{Kind: expr.VerdictAccept})
		add(slices.Concat(iface(unix.NFT_META_IIFNAME, at.Tap),
			addr(16, netip.PrefixFrom(MetadataAddr, 32)), accept(true))...)
		sorted := slices.Clone(rules)
		slices.SortStableFunc(sorted, func(x, y Rule) int { return cmp.Compare(x.Priority, y.Priority) })
		has := map[Direction]bool{}
		for _, r := range sorted {
			has[r.Direction] = true
			add(r.exprs(at.Tap)...)
		}
		for _, d := range []Direction{Ingress, Egress} {
			if has[d] {
				add(slices.Concat(tapMatch(d, at.Tap), accept(false))...)
			}
		}
	}
	if err := c.Flush(); err != nil {
		return fmt.Errorf("vmnet: apply the ACL of %v: %w", a, err)
	}
	return nil
}

func (r Rule) validate() error {
	switch {
	case r.Direction != Ingress && r.Direction != Egress:
		return fmt.Errorf("vmnet: rule direction %q", r.Direction)
	case !slices.Contains([]string{"ANY", "TCP", "UDP", "ICMP"}, r.Protocol):
		return fmt.Errorf("vmnet: rule protocol %q", r.Protocol)
	case r.PortFrom != 0 && r.Protocol != "TCP" && r.Protocol != "UDP":
		return errors.New("vmnet: ports need TCP or UDP")
	case r.PortFrom < 0 || r.PortFrom > 65535 || r.PortTo < 0 || r.PortTo > 65535 || (r.PortTo != 0 && r.PortTo < r.PortFrom):
		return fmt.Errorf("vmnet: rule port range %d-%d", r.PortFrom, r.PortTo)
	case r.CIDR.IsValid() && !r.CIDR.Addr().Is4():
		return fmt.Errorf("vmnet: rule CIDR %v is not IPv4", r.CIDR)
	}
	return nil
}

// exprs is the rule as nftables expressions: the tap, the peer's address, the protocol,
// the port range, the verdict.
func (r Rule) exprs(tap string) []expr.Any {
	out := tapMatch(r.Direction, tap)
	off := uint32(12) // INGRESS: the peer is the source
	if r.Direction == Egress {
		off = 16
	}
	if r.CIDR.IsValid() && r.CIDR.Bits() > 0 {
		out = append(out, addr(off, r.CIDR)...)
	}
	proto := map[string]byte{"TCP": unix.IPPROTO_TCP, "UDP": unix.IPPROTO_UDP, "ICMP": unix.IPPROTO_ICMP}
	if p, ok := proto[r.Protocol]; ok {
		out = append(out, &expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{p}})
	}
	if r.PortFrom != 0 {
		to := r.PortTo
		if to == 0 {
			to = r.PortFrom
		}
		out = append(out, &expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: 2, Len: 2},
			&expr.Range{Op: expr.CmpOpEq, Register: 1, FromData: u16(r.PortFrom), ToData: u16(to)})
	}
	return append(out, accept(r.Allow)...)
}

// tapMatch matches traffic to the VM (out of its tap) for Ingress, from it for Egress.
func tapMatch(d Direction, tap string) []expr.Any {
	if d == Ingress {
		return iface(unix.NFT_META_OIFNAME, tap)
	}
	return iface(unix.NFT_META_IIFNAME, tap)
}

func iface(key uint32, name string) []expr.Any {
	b := make([]byte, 16)
	copy(b, name)
	return []expr.Any{&expr.Meta{Key: expr.MetaKey(key), Register: 1}, &expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: b}}
}

// addr matches the IPv4 address at offset off of the network header against p.
func addr(off uint32, p netip.Prefix) []expr.Any {
	p = p.Masked()
	mask := make([]byte, 4)
	binary.BigEndian.PutUint32(mask, ^uint32(0)<<(32-p.Bits()))
	a := p.Addr().As4()
	return []expr.Any{
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: off, Len: 4},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: mask, Xor: make([]byte, 4)},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: a[:]},
	}
}

func accept(ok bool) []expr.Any {
	if ok {
		return []expr.Any{&expr.Verdict{Kind: expr.VerdictAccept}}
	}
	return []expr.Any{&expr.Verdict{Kind: expr.VerdictDrop}}
}

func u16(v int) []byte { b := make([]byte, 2); binary.BigEndian.PutUint16(b, uint16(v)); return b }

func u32(v uint32) []byte { b := make([]byte, 4); binary.NativeEndian.PutUint32(b, v); return b }
