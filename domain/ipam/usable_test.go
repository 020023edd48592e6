package ipam

import (
	"net/netip"
	"testing"
)

func TestUsable(t *testing.T) {
	tests := []struct {
		prefix, addr string
		ok           bool
	}{
		{"10.0.0.0/24", "10.0.0.1", true},
		{"10.0.0.0/24", "10.0.0.254", true},
		{"10.0.0.0/24", "10.0.0.0", false},   // network address
		{"10.0.0.0/24", "10.0.0.255", false}, // broadcast
		{"10.0.0.0/24", "10.0.1.1", false},   // outside
		{"10.0.0.0/31", "10.0.0.0", true},    // point-to-point: both usable
		{"10.0.0.0/32", "10.0.0.0", true},
		{"10.0.0.0/22", "10.0.3.255", false},
		{"10.0.0.0/22", "10.0.3.254", true},
		{"2001:db8::/64", "2001:db8::", false}, // subnet-router anycast
		{"2001:db8::/64", "2001:db8::1", true},
		{"2001:db8::/127", "2001:db8::", true}, // RFC 6164 point-to-point: both usable
		{"2001:db8::1/128", "2001:db8::1", true},
		{"2001:db8::/64", "2001:db9::1", false},
	}
	for _, tt := range tests {
		err := Usable(netip.MustParsePrefix(tt.prefix), netip.MustParseAddr(tt.addr))
		if (err == nil) != tt.ok {
			t.Errorf("Usable(%s, %s) = %v, want ok=%v", tt.prefix, tt.addr, err, tt.ok)
		}
	}
}

func TestBroadcast(t *testing.T) {
	for prefix, want := range map[string]string{
		"10.0.0.0/24":   "10.0.0.255",
		"10.0.0.0/22":   "10.0.3.255",
		"172.16.0.0/12": "172.31.255.255",
		"10.1.2.3/32":   "10.1.2.3",
	} {
		if got := Broadcast(netip.MustParsePrefix(prefix)); got.String() != want {
			t.Errorf("Broadcast(%s) = %s, want %s", prefix, got, want)
		}
	}
}
