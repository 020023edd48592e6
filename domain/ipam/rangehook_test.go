package ipam_test

import (
	"testing"

	"github.com/virtflow/virtflow/domain/apierr"
)

func TestRangeHook(t *testing.T) {
	f := newFixture(t)
	n := f.network("10.6.0.0/24", "10.6.0.1")
	f.ranges(n, "10.6.0.100-10.6.0.149")
	v6 := f.network("2001:db8:6::/64", "")

	tests := []struct {
		name        string
		network     int
		first, last string
		field       string // "" = accepted
		stored      [2]string
	}{
		{name: "inside the prefix", first: "10.6.0.10", last: "10.6.0.19", stored: [2]string{"10.6.0.10", "10.6.0.19"}},
		{name: "one address", first: "10.6.0.20", last: "10.6.0.20", stored: [2]string{"10.6.0.20", "10.6.0.20"}},
		{name: "touching an existing range", first: "10.6.0.150", last: "10.6.0.160", stored: [2]string{"10.6.0.150", "10.6.0.160"}},
		{name: "IPv6 stored in canonical form", network: v6.ID, first: "2001:DB8:6:0::10", last: "2001:db8:6:0:0:0:0:ff",
			stored: [2]string{"2001:db8:6::10", "2001:db8:6::ff"}},
		{name: "start outside the prefix", first: "10.7.0.10", last: "10.6.0.19", field: "startAddress"},
		{name: "end outside the prefix", first: "10.6.0.30", last: "10.6.1.5", field: "endAddress"},
		{name: "network address", first: "10.6.0.0", last: "10.6.0.5", field: "startAddress"},
		{name: "broadcast address", first: "10.6.0.250", last: "10.6.0.255", field: "endAddress"},
		{name: "reversed", first: "10.6.0.40", last: "10.6.0.30", field: "endAddress"},
		{name: "overlapping an existing range", first: "10.6.0.90", last: "10.6.0.100", field: "startAddress"},
		{name: "inside an existing range", first: "10.6.0.110", last: "10.6.0.120", field: "startAddress"},
		{name: "around an existing range", first: "10.6.0.60", last: "10.6.0.199", field: "startAddress"},
		{name: "mixed family", first: "10.6.0.50", last: "2001:db8:6::1", field: "endAddress"},
		{name: "IPv6 range in an IPv4 network", first: "2001:db8:6::1", last: "2001:db8:6::2", field: "startAddress"},
		{name: "not an address", first: "10.6.0.x", last: "10.6.0.2", field: "startAddress"},
		{name: "network that does not exist", network: -1, first: "10.6.0.50", last: "10.6.0.51", field: "networkID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := n.ID
			if tt.network != 0 {
				id = tt.network
			}
			r, err := f.tryRange(id, tt.first, tt.last)
			if tt.field != "" {
				expectAPIError(t, err, apierr.CodeValidation, tt.field)
				return
			}
			if err != nil {
				t.Fatalf("reserve %s-%s: %v", tt.first, tt.last, err)
			}
			if got := [2]string{r.StartAddress, r.EndAddress}; got != tt.stored {
				t.Errorf("stored %v, want %v", got, tt.stored)
			}
		})
	}

	t.Run("update", func(t *testing.T) {
		n := f.network("10.6.1.0/24", "")
		a, err := f.tryRange(n.ID, "10.6.1.10", "10.6.1.19")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.tryRange(n.ID, "10.6.1.30", "10.6.1.39"); err != nil {
			t.Fatal(err)
		}
		// Growing a range over itself is no overlap.
		if _, err := a.Update().SetEndAddress("10.6.1.25").Save(f.ctx); err != nil {
			t.Fatalf("grow a range: %v", err)
		}
		_, err = a.Update().SetEndAddress("10.6.1.30").Save(f.ctx)
		expectAPIError(t, err, apierr.CodeValidation, "startAddress")
		_, err = a.Update().SetStartAddress("10.6.1.26").Save(f.ctx) // after the stored end
		expectAPIError(t, err, apierr.CodeValidation, "endAddress")
		other := f.network("10.6.2.0/24", "")
		_, err = a.Update().SetNetworkID(other.ID).Save(f.ctx) // moved out of its prefix
		expectAPIError(t, err, apierr.CodeValidation, "startAddress")
		_, err = f.c.IPRange.Update().Where().SetStartAddress("10.6.1.1").Save(f.ctx)
		expectAPIError(t, err, apierr.CodeValidation, "startAddress")
	})

	t.Run("a prefix cannot shrink away from its ranges", func(t *testing.T) {
		n := f.network("10.6.4.0/23", "")
		f.ranges(n, "10.6.5.10-10.6.5.20")
		_, err := n.Update().SetCidr("10.6.4.0/24").Save(f.ctx)
		expectAPIError(t, err, apierr.CodeValidation, "cidr")
	})
}
