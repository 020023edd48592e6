package ratekey

import (
	"strings"
	"testing"
)

func TestSource(t *testing.T) {
	if Source("2001:db8:1:2::1") != Source("2001:db8:1:2:ffff::9") || Source("2001:db8:1:3::1") == Source("2001:db8:1:2::1") {
		t.Fatal("IPv6 sources are not grouped by /64")
	}
	for in, want := range map[string]string{
		"198.51.100.7":        "198.51.100.7",
		"::ffff:198.51.100.7": "198.51.100.7",
		"fe80::1%eth0":        "fe80::/64",
		"":                    "unknown",
		"not-an-address":      "not-an-address",
	} {
		if got := Source(in); got != want {
			t.Errorf("Source(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Source(strings.Repeat("x", 65)); !strings.HasPrefix(got, "sha256:") || len(got) != len("sha256:")+64 {
		t.Errorf("a long source is %q, want its SHA-256", got)
	}
}
