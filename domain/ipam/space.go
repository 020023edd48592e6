package ipam

import (
	"net/netip"
	"slices"
	"sort"
)

// space is what a network uses of its prefix, with no database behind it: the host addresses,
// the gateway, the addresses recorded in it and its reserved ranges. Building one sorts and
// merges what is used, and every question it answers (the lowest free address, the free
// ranges, the counts) walks that list once: the cost grows with the number of used addresses
// and ranges, never with the size of the prefix, so an IPv6 /64 costs what an IPv4 /24 does.
type space struct {
	prefix  netip.Prefix
	hosts   Range      // the addresses that could ever be handed out
	gateway netip.Addr // the zero Addr when the network has none
	addrs   []usedAddr // recorded addresses inside hosts, sorted, distinct
	ranges  []Range    // reserved ranges clipped to hosts, merged
	taken   []Range    // gateway ∪ addrs ∪ ranges, merged: everything not free
	stored  []Range    // reserved ranges as stored, sorted, for messages
}

// usedAddr is a recorded address and whether its status is RESERVED (else ALLOCATED).
type usedAddr struct {
	addr     netip.Addr
	reserved bool
}

// newSpace describes prefix with the given gateway (zero Addr: none), recorded addresses and
// reserved ranges. Addresses and ranges outside the host addresses are ignored (the hooks keep
// them out), duplicates count once.
func newSpace(prefix netip.Prefix, gateway netip.Addr, addrs []usedAddr, ranges []Range) *space {
	s := &space{prefix: prefix.Masked(), hosts: hostRange(prefix)}
	if gateway.IsValid() && s.hosts.contains(gateway) {
		s.gateway = gateway
	}
	for _, a := range addrs {
		if s.hosts.contains(a.addr) {
			s.addrs = append(s.addrs, a)
		}
	}
	slices.SortFunc(s.addrs, func(a, b usedAddr) int { return a.addr.Compare(b.addr) })
	s.addrs = slices.CompactFunc(s.addrs, func(a, b usedAddr) bool { return a.addr == b.addr })

	s.stored = slices.Clone(ranges)
	slices.SortFunc(s.stored, func(a, b Range) int { return a.First.Compare(b.First) })
	var clipped []Range
	for _, r := range ranges {
		if c, ok := r.clip(s.hosts); ok {
			clipped = append(clipped, c)
		}
	}
	s.ranges = merge(clipped)

	taken := slices.Clone(s.ranges)
	if s.gateway.IsValid() {
		taken = append(taken, Range{s.gateway, s.gateway})
	}
	for _, a := range s.addrs {
		taken = append(taken, Range{a.addr, a.addr})
	}
	s.taken = merge(taken)
	return s
}

// next returns the lowest free address, or false when there is none.
func (s *space) next() (netip.Addr, bool) {
	free := s.free(1)
	if len(free) == 0 {
		return netip.Addr{}, false
	}
	return free[0].First, true
}

// free returns up to limit free ranges, lowest first (limit ≤ 0: all of them).
func (s *space) free(limit int) []Range {
	var out []Range
	cur := s.hosts.First
	for _, t := range s.taken {
		if limit > 0 && len(out) == limit {
			return out
		}
		if cur.Less(t.First) {
			out = append(out, Range{cur, t.First.Prev()})
		}
		cur = t.Last.Next()
		if !cur.IsValid() || s.hosts.Last.Less(cur) { // past the end of the space or the prefix
			return out
		}
	}
	if limit > 0 && len(out) == limit {
		return out
	}
	return append(out, Range{cur, s.hosts.Last})
}

// reservedRange returns the stored reserved range containing a, if any.
func (s *space) reservedRange(a netip.Addr) (Range, bool) {
	i := sort.Search(len(s.stored), func(i int) bool { return a.Less(s.stored[i].First) })
	// Stored ranges do not overlap (RangeHook), so only the one starting last at or before a
	// can hold it; scan back in case older rows overlap anyway.
	for j := i - 1; j >= 0; j-- {
		if s.stored[j].contains(a) {
			return s.stored[j], true
		}
	}
	return Range{}, false
}

// inRanges reports whether a lies in one of the merged reserved ranges.
func (s *space) inRanges(a netip.Addr) bool {
	i := sort.Search(len(s.ranges), func(i int) bool { return !s.ranges[i].Last.Less(a) })
	return i < len(s.ranges) && s.ranges[i].contains(a)
}

// usage counts the prefix. Every address counts once: a recorded address by its status (even
// inside a reserved range), the gateway as allocated unless an address row records it, the
// rest of the reserved ranges as reserved. So allocated + reserved + free = usable.
func (s *space) usage() Usage {
	u := Usage{
		Prefix: s.prefix.String(),
		Size:   prefixSize(s.prefix),
		Usable: s.hosts.Size(),
	}
	var pointsInRanges float64
	gatewayRecorded := false
	for _, a := range s.addrs {
		if a.reserved {
			u.Reserved++
		} else {
			u.Allocated++
		}
		if a.addr == s.gateway {
			gatewayRecorded = true
		}
		if s.inRanges(a.addr) {
			pointsInRanges++
		}
	}
	if s.gateway.IsValid() && !gatewayRecorded {
		u.Allocated++
		if s.inRanges(s.gateway) {
			pointsInRanges++
		}
	}
	for _, r := range s.ranges {
		u.Reserved += r.Size()
	}
	u.Reserved -= pointsInRanges
	u.Free = max(u.Usable-u.Allocated-u.Reserved, 0)
	if u.Usable > 0 {
		u.PercentUsed = (u.Allocated + u.Reserved) / u.Usable * 100
	}
	return u
}
