package ipam

import (
	"fmt"
	"math"
	"net/netip"
	"strings"
	"testing"
)

// parseRange parses "a" or "a-b".
func parseRange(t *testing.T, s string) Range {
	t.Helper()
	first, last, ok := strings.Cut(s, "-")
	if !ok {
		last = first
	}
	return Range{netip.MustParseAddr(first), netip.MustParseAddr(last)}
}

// testSpace builds a space from strings: used addresses ("r:" marks RESERVED) and ranges.
func testSpace(t *testing.T, prefix, gateway string, addrs, ranges []string) *space {
	t.Helper()
	var gw netip.Addr
	if gateway != "" {
		gw = netip.MustParseAddr(gateway)
	}
	var used []usedAddr
	for _, a := range addrs {
		s, reserved := strings.CutPrefix(a, "r:")
		used = append(used, usedAddr{addr: netip.MustParseAddr(s), reserved: reserved})
	}
	var rs []Range
	for _, r := range ranges {
		rs = append(rs, parseRange(t, r))
	}
	return newSpace(netip.MustParsePrefix(prefix), gw, used, rs)
}

func TestSpaceNext(t *testing.T) {
	tests := []struct {
		name            string
		prefix, gateway string
		addrs, ranges   []string
		want            string // "" means full
	}{
		{name: "empty /24 starts after the network address", prefix: "10.0.0.0/24", want: "10.0.0.1"},
		{name: "gateway skipped", prefix: "10.0.0.0/24", gateway: "10.0.0.1", want: "10.0.0.2"},
		{name: "gateway in the middle is not in the way", prefix: "10.0.0.0/24", gateway: "10.0.0.254", want: "10.0.0.1"},
		{name: "taken, unsorted", prefix: "10.0.0.0/24", gateway: "10.0.0.1", addrs: []string{"10.0.0.3", "10.0.0.2", "10.0.0.5"}, want: "10.0.0.4"},
		{name: "reserved range skipped", prefix: "10.0.0.0/24", gateway: "10.0.0.1", ranges: []string{"10.0.0.2-10.0.0.99"}, want: "10.0.0.100"},
		{name: "range, then taken, then gap", prefix: "10.0.0.0/24", addrs: []string{"10.0.0.11", "r:10.0.0.12"}, ranges: []string{"10.0.0.1-10.0.0.10"}, want: "10.0.0.13"},
		{name: "range touching an address", prefix: "10.0.0.0/24", addrs: []string{"10.0.0.1"}, ranges: []string{"10.0.0.2-10.0.0.3"}, want: "10.0.0.4"},
		{name: "broadcast never handed out", prefix: "10.0.0.0/24", ranges: []string{"10.0.0.1-10.0.0.253"}, want: "10.0.0.254"},
		{name: "full /24", prefix: "10.0.0.0/24", gateway: "10.0.0.254", ranges: []string{"10.0.0.1-10.0.0.253"}},
		{name: "/22 crosses octets", prefix: "10.0.0.0/22", ranges: []string{"10.0.0.1-10.0.0.255"}, addrs: []string{"10.0.1.0"}, want: "10.0.1.1"},
		{name: "/30 has two hosts", prefix: "10.0.0.0/30", want: "10.0.0.1"},
		{name: "/30 full", prefix: "10.0.0.0/30", gateway: "10.0.0.1", addrs: []string{"10.0.0.2"}},
		{name: "/31 uses both addresses", prefix: "10.0.0.0/31", want: "10.0.0.0"},
		{name: "/31 second address", prefix: "10.0.0.0/31", gateway: "10.0.0.0", want: "10.0.0.1"},
		{name: "/31 full", prefix: "10.0.0.0/31", addrs: []string{"10.0.0.0", "10.0.0.1"}},
		{name: "/32", prefix: "10.1.2.3/32", want: "10.1.2.3"},
		{name: "/32 full", prefix: "10.1.2.3/32", addrs: []string{"10.1.2.3"}},
		{name: "top of the IPv4 space", prefix: "255.255.255.255/32", want: "255.255.255.255"},
		{name: "top of the IPv4 space, full", prefix: "255.255.255.255/32", addrs: []string{"255.255.255.255"}},
		{name: "IPv6 /64 starts after the subnet-router anycast address", prefix: "2001:db8::/64", want: "2001:db8::1"},
		{name: "IPv6 gateway and range", prefix: "2001:db8::/64", gateway: "2001:db8::1", addrs: []string{"2001:db8::2"}, ranges: []string{"2001:db8::3-2001:db8::ffff"}, want: "2001:db8::1:0"},
		{name: "IPv6 /64 all but the last address taken, without walking 2^64",
			prefix: "2001:db8::/64", ranges: []string{"2001:db8::-2001:db8::ffff:ffff:ffff:fffe"}, want: "2001:db8::ffff:ffff:ffff:ffff"},
		{name: "IPv6 /64 full", prefix: "2001:db8::/64", ranges: []string{"2001:db8::-2001:db8::ffff:ffff:ffff:ffff"}},
		{name: "IPv6 ::/0 full, no overflow past the last address", prefix: "::/0", ranges: []string{"::-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}},
		{name: "IPv6 /127", prefix: "2001:db8::/127", addrs: []string{"2001:db8::"}, want: "2001:db8::1"},
		{name: "ranges outside the hosts are clipped", prefix: "10.0.0.0/24", ranges: []string{"10.0.0.0-10.0.0.4", "10.0.1.0-10.0.1.9"}, want: "10.0.0.5"},
		{name: "overlapping ranges merged", prefix: "10.0.0.0/24", ranges: []string{"10.0.0.1-10.0.0.9", "10.0.0.5-10.0.0.20", "10.0.0.21-10.0.0.21"}, want: "10.0.0.22"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := testSpace(t, tt.prefix, tt.gateway, tt.addrs, tt.ranges).next()
			if tt.want == "" {
				if ok {
					t.Fatalf("next = %s, want none (full)", got)
				}
				return
			}
			if !ok || got.String() != tt.want {
				t.Fatalf("next = %v (ok %v), want %s", got, ok, tt.want)
			}
		})
	}
}

func TestSpaceFree(t *testing.T) {
	s := testSpace(t, "10.0.0.0/24", "10.0.0.1", []string{"10.0.0.10", "r:10.0.0.254"}, []string{"10.0.0.100-10.0.0.199"})
	want := []string{"10.0.0.2–10.0.0.9 8", "10.0.0.11–10.0.0.99 89", "10.0.0.200–10.0.0.253 54"}
	check := func(limit int, want []string) {
		t.Helper()
		got := s.free(limit)
		var g []string
		for _, r := range got {
			g = append(g, fmt.Sprintf("%s %v", r, r.Size()))
		}
		if strings.Join(g, ", ") != strings.Join(want, ", ") {
			t.Errorf("free(%d) = %v, want %v", limit, g, want)
		}
	}
	check(0, want)
	check(100, want)
	check(2, want[:2])
	check(1, want[:1])

	full := testSpace(t, "10.0.0.0/30", "10.0.0.1", []string{"10.0.0.2"}, nil)
	if got := full.free(10); len(got) != 0 {
		t.Errorf("free of a full /30 = %v, want none", got)
	}
	v6 := testSpace(t, "2001:db8::/64", "2001:db8::1", nil, nil)
	got := v6.free(10)
	if len(got) != 1 || got[0].String() != "2001:db8::2–2001:db8::ffff:ffff:ffff:ffff" {
		t.Fatalf("free of an IPv6 /64 with a gateway = %v", got)
	}
	if got[0].Size() != math.Exp2(64)-2 {
		t.Errorf("size of %s = %v, want 2^64-2", got[0], got[0].Size())
	}
}

func TestSpaceUsage(t *testing.T) {
	tests := []struct {
		name            string
		prefix, gateway string
		addrs, ranges   []string
		want            Usage
	}{
		{
			name: "empty /24", prefix: "10.0.0.0/24",
			want: Usage{Prefix: "10.0.0.0/24", Size: 256, Usable: 254, Free: 254},
		},
		{
			name: "gateway, addresses, range", prefix: "10.0.0.0/24", gateway: "10.0.0.1",
			addrs: []string{"10.0.0.10", "10.0.0.11", "r:10.0.0.12"}, ranges: []string{"10.0.0.100-10.0.0.199"},
			want: Usage{Prefix: "10.0.0.0/24", Size: 256, Usable: 254, Allocated: 3, Reserved: 101, Free: 150, PercentUsed: 104.0 / 254 * 100},
		},
		{
			name: "addresses inside a range count once, by their status", prefix: "10.0.0.0/24",
			addrs: []string{"10.0.0.100", "r:10.0.0.101"}, ranges: []string{"10.0.0.100-10.0.0.109"},
			want: Usage{Prefix: "10.0.0.0/24", Size: 256, Usable: 254, Allocated: 1, Reserved: 9, Free: 244, PercentUsed: 10.0 / 254 * 100},
		},
		{
			name: "gateway recorded as an address counts once", prefix: "10.0.0.0/24", gateway: "10.0.0.1",
			addrs: []string{"r:10.0.0.1"},
			want:  Usage{Prefix: "10.0.0.0/24", Size: 256, Usable: 254, Reserved: 1, Free: 253, PercentUsed: 1.0 / 254 * 100},
		},
		{
			name: "gateway inside a range counts once", prefix: "10.0.0.0/24", gateway: "10.0.0.1",
			ranges: []string{"10.0.0.1-10.0.0.4"},
			want:   Usage{Prefix: "10.0.0.0/24", Size: 256, Usable: 254, Allocated: 1, Reserved: 3, Free: 250, PercentUsed: 4.0 / 254 * 100},
		},
		{
			name: "/31", prefix: "10.0.0.0/31", addrs: []string{"10.0.0.0"},
			want: Usage{Prefix: "10.0.0.0/31", Size: 2, Usable: 2, Allocated: 1, Free: 1, PercentUsed: 50},
		},
		{
			name: "/32 full", prefix: "10.0.0.7/32", addrs: []string{"10.0.0.7"},
			want: Usage{Prefix: "10.0.0.7/32", Size: 1, Usable: 1, Allocated: 1, PercentUsed: 100},
		},
		{
			name: "IPv6 /120", prefix: "2001:db8::/120", gateway: "2001:db8::1", ranges: []string{"2001:db8::80-2001:db8::ff"},
			want: Usage{Prefix: "2001:db8::/120", Size: 256, Usable: 255, Allocated: 1, Reserved: 128, Free: 126, PercentUsed: 129.0 / 255 * 100},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := testSpace(t, tt.prefix, tt.gateway, tt.addrs, tt.ranges).usage()
			if math.Abs(got.PercentUsed-tt.want.PercentUsed) < 1e-9 {
				got.PercentUsed = tt.want.PercentUsed // constant vs run-time rounding
			}
			if got != tt.want {
				t.Errorf("usage = %+v\nwant    %+v", got, tt.want)
			}
		})
	}

	t.Run("IPv6 /64", func(t *testing.T) {
		got := testSpace(t, "2001:db8::/64", "2001:db8::1", []string{"2001:db8::2"}, nil).usage()
		if got.Size != math.Exp2(64) || got.Usable != math.Exp2(64)-1 || got.Allocated != 2 || got.Free <= 0 || got.PercentUsed <= 0 {
			t.Errorf("usage = %+v", got)
		}
	})
}

func TestMerge(t *testing.T) {
	in := []Range{
		parseRange(t, "10.0.0.20-10.0.0.30"),
		parseRange(t, "10.0.0.1-10.0.0.5"),
		parseRange(t, "10.0.0.6-10.0.0.6"), // touches the previous one
		parseRange(t, "10.0.0.25-10.0.0.26"),
		parseRange(t, "10.0.0.8-10.0.0.9"), // gap of one before it
	}
	var got []string
	for _, r := range merge(in) {
		got = append(got, r.String())
	}
	want := "10.0.0.1–10.0.0.6 10.0.0.8–10.0.0.9 10.0.0.20–10.0.0.30"
	if strings.Join(got, " ") != want {
		t.Errorf("merge = %v, want %s", got, want)
	}
}

func TestRangeSize(t *testing.T) {
	for r, want := range map[string]float64{
		"10.0.0.0-10.0.0.0":                            1,
		"10.0.0.0-10.0.3.255":                          1024,
		"0.0.0.0-255.255.255.255":                      math.Exp2(32),
		"2001:db8::-2001:db8::ffff:ffff:ffff:ffff":     math.Exp2(64),
		"2001:db8::ffff:ffff:ffff:ffff-2001:db8:0:1::": 2, // borrow across the 64-bit halves
		"::-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff":   math.Exp2(128),
	} {
		if got := parseRange(t, r).Size(); got != want {
			t.Errorf("Size(%s) = %v, want %v", r, got, want)
		}
	}
}

func TestHostRange(t *testing.T) {
	for prefix, want := range map[string]string{
		"10.0.0.0/24":     "10.0.0.1–10.0.0.254",
		"10.0.0.0/30":     "10.0.0.1–10.0.0.2",
		"10.0.0.0/31":     "10.0.0.0–10.0.0.1",
		"10.0.0.9/32":     "10.0.0.9",
		"2001:db8::/64":   "2001:db8::1–2001:db8::ffff:ffff:ffff:ffff",
		"2001:db8::/126":  "2001:db8::1–2001:db8::3",
		"2001:db8::/127":  "2001:db8::–2001:db8::1",
		"2001:db8::1/128": "2001:db8::1",
	} {
		if got := hostRange(netip.MustParsePrefix(prefix)).String(); got != want {
			t.Errorf("hostRange(%s) = %s, want %s", prefix, got, want)
		}
	}
}
