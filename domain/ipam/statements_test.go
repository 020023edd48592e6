package ipam_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/domain/ipam"
	"github.com/virtflow/virtflow/ent"
)

// countingClient is an ent client over the fixture's database that counts the SQL statements
// it sends (BEGIN and COMMIT aside).
func (f *fixture) countingClient() (*ent.Client, *atomic.Int64) {
	var n atomic.Int64
	drv := dialect.DebugWithContext(entsql.OpenDB(dialect.Postgres, f.env.DB.DB), func(_ context.Context, v ...any) {
		if s := fmt.Sprint(v...); strings.Contains(s, ".Query:") || strings.Contains(s, ".Exec:") {
			n.Add(1)
		}
	})
	return ent.NewClient(ent.Driver(drv)), &n
}

// TestAllocateStatements: an allocation sends the same few statements however many addresses
// the network holds — lock the network, read its ranges, read its addresses, insert — and a
// specific address one fewer (no addresses to read). Holding the lock is what makes them
// wait, so these statements are what bounds allocations per second in one network.
func TestAllocateStatements(t *testing.T) {
	f := newFixture(t)
	c, count := f.countingClient()
	n := f.network("10.50.0.0/22", "10.50.0.1")
	f.ranges(n, "10.50.3.0-10.50.3.254", "10.50.2.200-10.50.2.210")

	measure := func(req ipam.Request) int64 {
		t.Helper()
		before := count.Load()
		if _, err := ipam.Allocate(f.ctx, c, req); err != nil {
			t.Fatal(err)
		}
		return count.Load() - before
	}
	empty := measure(ipam.Request{NetworkID: n.ID})
	if _, err := f.env.DB.DB.Exec(`INSERT INTO ip_addresses (created_at, updated_at, address, status, network_ip_addresses)
		SELECT now(), now(), '10.50.' || (g / 256)::text || '.' || (g % 256)::text, 'ALLOCATED', $1 FROM generate_series(3, 600) g`, n.ID); err != nil {
		t.Fatal(err)
	}
	full := measure(ipam.Request{NetworkID: n.ID})
	specific := measure(ipam.Request{NetworkID: n.ID, Address: ptr("10.50.2.250")})
	if empty != 4 || full != 4 || specific != 3 {
		t.Errorf("statements per allocation: %d with no address, %d with 600, %d for a specific address; want 4, 4 and 3", empty, full, specific)
	}
}
