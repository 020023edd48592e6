package ipam

import (
	"cmp"
	"encoding/binary"
	"math"
	"net/netip"
	"slices"
)

// Range is an inclusive interval of addresses of one family, First ≤ Last: a free range of a
// network, a reserved range, or the host addresses of a prefix.
type Range struct {
	First, Last netip.Addr
}

// Size is the number of addresses in r, as a float64 (IPv6 spans exceed 2^53, where the
// count is rounded).
func (r Range) Size() float64 { return distance(r.First, r.Last) + 1 }

// contains reports whether a lies in s.
func (s Range) contains(a netip.Addr) bool {
	return s.First.Compare(a) <= 0 && a.Compare(s.Last) <= 0
}

// overlaps reports whether s and t share an address.
func (s Range) overlaps(t Range) bool {
	return s.First.Compare(t.Last) <= 0 && t.First.Compare(s.Last) <= 0
}

// clip returns s cut to within, and false when nothing of s lies inside it.
func (s Range) clip(within Range) (Range, bool) {
	if !s.overlaps(within) {
		return Range{}, false
	}
	if s.First.Less(within.First) {
		s.First = within.First
	}
	if within.Last.Less(s.Last) {
		s.Last = within.Last
	}
	return s, true
}

// distance returns b − a for a ≤ b of the same family, as a float64.
func distance(a, b netip.Addr) float64 {
	ah, al := words(a)
	bh, bl := words(b)
	lo := bl - al
	hi := bh - ah
	if bl < al { // borrow
		hi--
	}
	return float64(hi)*math.Exp2(64) + float64(lo)
}

// words returns the 128-bit value of a (IPv4 as its IPv4-mapped IPv6 form) as two halves;
// differences between two addresses of the same family are right either way.
func words(a netip.Addr) (hi, lo uint64) {
	b := a.As16()
	return binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
}

// merge sorts ranges and coalesces the ones that overlap or touch, so that every address
// appears at most once and gaps between consecutive spans are never empty.
func merge(ranges []Range) []Range {
	if len(ranges) == 0 {
		return nil
	}
	s := slices.Clone(ranges)
	slices.SortFunc(s, func(a, b Range) int {
		return cmp.Or(a.First.Compare(b.First), a.Last.Compare(b.Last))
	})
	out := s[:1]
	for _, t := range s[1:] {
		last := &out[len(out)-1]
		next := last.Last.Next() // the zero Addr past the end of the address space
		if t.First.Compare(last.Last) <= 0 || (next.IsValid() && t.First == next) {
			if last.Last.Less(t.Last) {
				last.Last = t.Last
			}
			continue
		}
		out = append(out, t)
	}
	return out
}

// lastAddr returns the highest address of p (the broadcast address of an IPv4 prefix).
func lastAddr(p netip.Prefix) netip.Addr {
	p = p.Masked()
	if p.Addr().Is4() {
		return Broadcast(p)
	}
	b := p.Addr().As16()
	for i := p.Bits(); i < 128; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	return netip.AddrFrom16(b)
}

// hostRange returns the host addresses of p: the whole prefix, less the network and broadcast
// addresses of IPv4 prefixes of /30 and wider and the subnet-router anycast address of IPv6
// prefixes of /126 and wider (the addresses Usable accepts).
func hostRange(p netip.Prefix) Range {
	p = p.Masked()
	s := Range{First: p.Addr(), Last: lastAddr(p)}
	if p.Addr().Is4() && p.Bits() <= 30 {
		s.First, s.Last = s.First.Next(), s.Last.Prev()
	}
	if p.Addr().Is6() && p.Bits() <= 126 {
		s.First = s.First.Next() // the subnet-router anycast address (RFC 4291 2.6.1)
	}
	return s
}

// prefixSize returns the number of addresses of p, 2^(address bits − prefix length).
func prefixSize(p netip.Prefix) float64 {
	return math.Exp2(float64(p.Addr().BitLen() - p.Bits()))
}

// String renders r as "first–last", or one address when it holds only one.
func (r Range) String() string {
	if r.First == r.Last {
		return r.First.String()
	}
	return r.First.String() + "–" + r.Last.String()
}
