package livestatus_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/gateway/livestatus"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// BenchmarkDelivery1000 measures subscription delivery on PostgreSQL and the real Redis:
// 1,000 subscribers of virtualMachineStatusChanged in one process, re-reading the VM with
// their viewer, and one status change per iteration, committed in a transaction. It
// reports the latency from the commit to each subscriber holding the re-read VM (p50, p99,
// max, in ms) — the path a GraphQL subscription takes, minus the websocket write. The
// 1,000 viewers are distinct but hold the same permissions, so they share one re-read per
// event (readScopeKey); viewers whose permissions differ would each read for themselves.
func BenchmarkDelivery1000(b *testing.B) {
	for _, viewers := range []int{1, 1000} {
		b.Run(fmt.Sprintf("viewers=%d", viewers), func(b *testing.B) { benchDelivery(b, 1000, viewers) })
	}
}

func benchDelivery(b *testing.B, subscribers, viewers int) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db, err := infra.OpenDatabase(ctx, testdb.DSN(b), "")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	rd, err := infra.OpenRedis(ctx, testdb.RedisURL())
	if err != nil {
		b.Fatal(err)
	}
	defer rd.Close()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	channel := fmt.Sprintf("virtflow:live:bench:%d", time.Now().UnixNano())
	livestatus.Install(db.Client, rd.Client, log).Channel = channel

	sys := authz.SystemContext(ctx, "bench")
	c := db.Client
	region := c.Region.Create().SetName(fmt.Sprintf("bench-%d", time.Now().UnixNano())).SaveX(sys)
	tenant := c.Tenant.Create().SetName(region.Name).SaveX(sys)
	flavor := c.Flavor.Create().SetName(region.Name).SetVcpus(1).SetMemoryMB(512).SetDiskGB(10).SaveX(sys)
	vm := c.VirtualMachine.Create().SetName(region.Name).SetTenantID(tenant.ID).SetRegionID(region.ID).
		SetFlavorID(flavor.ID).SaveX(sys)
	// Started after the VM's creation, so that event is not counted.
	hub := livestatus.NewHub(rd.Client, log)
	hub.Channel = channel
	if err := hub.Start(ctx); err != nil {
		b.Fatal(err)
	}

	var (
		mu        sync.Mutex
		committed time.Time
		lat       []time.Duration
		got       sync.WaitGroup
	)
	for i := range subscribers {
		subCtx := livestatus.NewContext(authz.SystemContext(ctx, fmt.Sprintf("bench-%d", i%viewers)), hub)
		ch, err := livestatus.VirtualMachines(subCtx, c, livestatus.VMFilter{ID: &vm.ID})
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			for range ch {
				mu.Lock()
				lat = append(lat, time.Since(committed))
				mu.Unlock()
				got.Done()
			}
		}()
	}
	statuses := []virtualmachine.Status{virtualmachine.StatusActive, virtualmachine.StatusStopped}
	b.ResetTimer()
	for i := range b.N {
		got.Add(subscribers)
		tx, err := c.Tx(sys)
		if err != nil {
			b.Fatal(err)
		}
		tx.VirtualMachine.UpdateOneID(vm.ID).SetStatus(statuses[i%2]).ExecX(sys)
		mu.Lock() // the commit publishes: time it from just before
		committed = time.Now()
		mu.Unlock()
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
		got.Wait()
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.50), "p50_ms")
	b.ReportMetric(pct(0.99), "p99_ms")
	b.ReportMetric(pct(1), "max_ms")
	b.ReportMetric(float64(hub.Dropped()), "dropped")
}
