package ipam_test

import (
	"testing"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/ipam"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// TestAllocateSQLite: the embedded database has no FOR UPDATE (the allocator leaves it out)
// and runs one writer at a time; allocation, the taken-address conflict and concurrent
// allocations behave as on PostgreSQL.
func TestAllocateSQLite(t *testing.T) {
	env := gqltest.SQLite(t)
	f := &fixture{t: t, env: env, c: env.Client, ctx: gqltest.System()}
	n := f.network("10.30.0.0/24", "10.30.0.1")
	f.ranges(n, "10.30.0.2-10.30.0.9")

	ip, err := ipam.Allocate(f.ctx, f.c, ipam.Request{NetworkID: n.ID})
	if err != nil || ip.Address != "10.30.0.10" {
		t.Fatalf("allocate = %v, %v; want 10.30.0.10", ip, err)
	}
	_, err = ipam.Allocate(f.ctx, f.c, ipam.Request{NetworkID: n.ID, Address: ptr("10.30.0.10")})
	expectAPIError(t, err, apierr.CodeConflict, "address")
	if _, err := ipam.Release(f.ctx, f.c, ip.ID, false); err != nil {
		t.Fatal(err)
	}

	res := race(100, 8, func(int) (*ent.IPAddress, error) {
		return ipam.Allocate(f.ctx, f.c, ipam.Request{NetworkID: n.ID})
	})
	if len(res.errs) > 0 || len(res.addrs) != 100 || res.duplicates() != 0 {
		t.Fatalf("%d allocations, %d duplicates, errors %v; want 100 distinct", len(res.addrs), res.duplicates(), res.errs)
	}
	u, err := ipam.Utilization(f.ctx, f.c, n)
	if err != nil || u.Allocated != 101 || u.Reserved != 8 {
		t.Fatalf("utilization = %+v, %v", u, err)
	}
}
