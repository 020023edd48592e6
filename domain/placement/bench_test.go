package placement

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent"
)

// BenchmarkCommittedPlacements measures placements committed through PostgreSQL by
// concurrent clients at the placement package level: each is Placer.CreateVM in a
// transaction of its own (insert the VM, load a snapshot of 100 nodes in nine queries,
// decide, conditional UPDATEs of a node and the quota, set the VM's node), as a GraphQL
// mutation does minus HTTP, authentication and the audit row.
//
//	go test ./domain/placement -run '^$' -bench CommittedPlacements -benchtime 2000x
//
// "quota=shared": one tenant with a quota, whose row every placement updates (the hot
// row); "quota=none": a tenant per client without quotas.
func BenchmarkCommittedPlacements(b *testing.B) {
	for _, shared := range []bool{true, false} {
		for _, clients := range []int{8, 32} {
			name := fmt.Sprintf("clients=%d/quota=none", clients)
			if shared {
				name = fmt.Sprintf("clients=%d/quota=shared", clients)
			}
			b.Run(name, func(b *testing.B) { benchPlacements(b, clients, shared) })
		}
	}
}

func benchPlacements(b *testing.B, clients int, shared bool) {
	db := openPostgres(b)
	ctx, c := placementtest.Ctx(), db.Client
	s := build(b, c, placementtest.Spec{Racks: 10, HostsPerRack: 10, PowerZones: 2, NetworkZones: 2,
		CPU: 1 << 20, MemoryMB: 1 << 40, DiskGB: 1 << 40, Cores: 1 << 19})
	f, err := s.Flavor(ctx, 1, 512, 1, false)
	if err != nil {
		b.Fatal(err)
	}
	tenants := make([]int, clients)
	for i := range tenants {
		tenants[i] = s.Tenant
		if !shared {
			t, err := c.Tenant.Create().SetName(fmt.Sprintf("%s-t%d", s.Prefix, i)).Save(ctx)
			if err != nil {
				b.Fatal(err)
			}
			tenants[i] = t.ID
		}
	}
	if shared {
		if _, err := s.Quota(ctx, s.Tenant, 1<<30, 0); err != nil {
			b.Fatal(err)
		}
	}
	p := New(Config{})
	var next atomic.Int64
	var failed atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for w := range clients {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				in := ent.CreateVirtualMachineInput{Name: fmt.Sprintf("b%d", i), TenantID: tenants[w], RegionID: s.Region, FlavorID: f.ID}
				if _, err := p.CreateVM(ctx, c, in); err != nil {
					failed.Add(1)
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "placements/s")
	b.ReportMetric(0, "ns/op")
	if failed.Load() == 0 {
		checkBooks(b, s)
	}
}
