package ipam_test

import (
	"math"
	"testing"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/ipam"
)

func TestUtilizationAndFreeRanges(t *testing.T) {
	f := newFixture(t)
	n := f.network("10.8.0.0/24", "10.8.0.1")
	f.ranges(n, "10.8.0.100-10.8.0.199")
	f.addrs(n, "10.8.0.10", "r:10.8.0.11", "10.8.0.150") // the last one inside the range

	u, err := ipam.Utilization(f.ctx, f.c, n)
	if err != nil {
		t.Fatal(err)
	}
	want := ipam.Usage{Prefix: "10.8.0.0/24", Size: 256, Usable: 254, Allocated: 3, Reserved: 100, Free: 151}
	want.PercentUsed = u.PercentUsed
	if u != want || math.Abs(u.PercentUsed-103.0/254*100) > 1e-9 {
		t.Errorf("utilization = %+v, want %+v with %.4f%%", u, want, 103.0/254*100)
	}

	free, err := ipam.FreeRanges(f.ctx, f.c, n, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var sum float64
	for _, r := range free {
		got = append(got, r.String())
		sum += r.Size()
	}
	wantRanges := []string{"10.8.0.2–10.8.0.9", "10.8.0.12–10.8.0.99", "10.8.0.200–10.8.0.254"}
	if len(got) != len(wantRanges) || got[0] != wantRanges[0] || got[1] != wantRanges[1] || got[2] != wantRanges[2] {
		t.Errorf("free ranges = %v, want %v", got, wantRanges)
	}
	if sum != u.Free {
		t.Errorf("free ranges hold %v addresses, utilization says %v are free", sum, u.Free)
	}
	if first, _ := ipam.FreeRanges(f.ctx, f.c, n, 1); len(first) != 1 || first[0].String() != wantRanges[0] {
		t.Errorf("first free range = %v", first)
	}
	_, err = ipam.FreeRanges(f.ctx, f.c, n, -1)
	expectAPIError(t, err, apierr.CodeValidation, "first")

	// Allocating takes the lowest free address: the first free range shrinks.
	if _, err := ipam.Allocate(f.ctx, f.c, ipam.Request{NetworkID: n.ID}); err != nil {
		t.Fatal(err)
	}
	after, _ := ipam.FreeRanges(f.ctx, f.c, n, 1)
	if after[0].String() != "10.8.0.3–10.8.0.9" {
		t.Errorf("after an allocation the first free range is %s, want 10.8.0.3–10.8.0.9", after[0])
	}

	t.Run("IPv6 /64", func(t *testing.T) {
		n := f.network("2001:db8:8::/64", "2001:db8:8::1")
		u, err := ipam.Utilization(f.ctx, f.c, n)
		if err != nil {
			t.Fatal(err)
		}
		if u.Size != math.Exp2(64) || u.Usable != math.Exp2(64)-1 || u.Allocated != 1 {
			t.Errorf("utilization = %+v", u)
		}
		free, err := ipam.FreeRanges(f.ctx, f.c, n, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(free) != 1 || free[0].String() != "2001:db8:8::2–2001:db8:8:0:ffff:ffff:ffff:ffff" {
			t.Errorf("free ranges = %v", free)
		}
	})
}
