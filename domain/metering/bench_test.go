package metering_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/virtflow/virtflow/domain/metering"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/reservationinterval"
)

// BenchmarkUsage30Days10kVMs is the 30-day report of a tenant with 10,000 VMs on
// PostgreSQL: one interval each running the whole month, a third of them resized (two
// intervals), a price change in the middle of the month, rated per resource and per day
// (300,000 day lines' worth of segments). The bound is 1 s per report.
func BenchmarkUsage30Days10kVMs(b *testing.B) {
	c := openPostgres(b)
	ctx := placementtest.Ctx()
	site, err := placementtest.Build(ctx, c, placementtest.Spec{Racks: 1, HostsPerRack: 1, CPU: 64, MemoryMB: 1 << 20, DiskGB: 1 << 12, Cores: 32})
	if err != nil {
		b.Fatal(err)
	}
	from := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	to := from.AddDate(0, 0, 30)
	for _, e := range []metering.PriceEntry{
		{Kind: metering.PriceVCPU, Key: "SHARED", AmountMicro: 11_000, EffectiveFrom: from.AddDate(-1, 0, 0)},
		{Kind: metering.PriceVCPU, Key: "SHARED", AmountMicro: 12_500, EffectiveFrom: from.AddDate(0, 0, 15)},
		{Kind: metering.PriceMemoryGB, AmountMicro: 3_300, EffectiveFrom: from.AddDate(-1, 0, 0)},
		{Kind: metering.PriceHostModel, Key: "R750", MultiplierPPM: 1_250_000, EffectiveFrom: from.AddDate(-1, 0, 0)},
	} {
		if _, err := metering.AddPrice(ctx, c, e); err != nil && !ent.IsConstraintError(err) {
			b.Fatal(err)
		}
	}
	const vms = 10_000
	if n, err := c.ReservationInterval.Query().Where(reservationinterval.TenantID(site.Tenant)).Count(ctx); err != nil || n == 0 {
		for lo := 0; lo < vms; lo += 1000 {
			bs := make([]*ent.ReservationIntervalCreate, 0, 1500)
			for id := lo; id < lo+1000; id++ {
				iv := func() *ent.ReservationIntervalCreate {
					return c.ReservationInterval.Create().SetTenantID(site.Tenant).SetKind(reservationinterval.KindVIRTUAL_MACHINE).
						SetResourceID(1_000_000 + id).SetResourceName(fmt.Sprintf("vm-%d", id)).SetRegion("region-1").
						SetFlavor("m1.small").SetVcpus(1 + id%4).SetMemoryMB(2048).SetCPUPolicy("SHARED").SetHostModel("R750")
				}
				if id%3 == 0 {
					mid := from.Add(time.Duration(id%(29*24)) * time.Hour)
					bs = append(bs, iv().SetStartedAt(from.Add(-time.Hour)).SetEndedAt(mid), iv().SetStartedAt(mid).SetVcpus(8))
				} else {
					bs = append(bs, iv().SetStartedAt(from.Add(-time.Hour)))
				}
			}
			if err := c.ReservationInterval.CreateBulk(bs...).Exec(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, groupBy := range [][]metering.GroupBy{{metering.GroupResource}, {metering.GroupResource, metering.GroupDay}} {
		b.Run(fmt.Sprint(groupBy), func(b *testing.B) {
			var lines int
			for b.Loop() {
				rep, err := metering.Usage(ctx, c, site.Tenant, from, to, to, groupBy)
				if err != nil {
					b.Fatal(err)
				}
				lines = len(rep.Lines)
			}
			b.ReportMetric(float64(lines), "lines")
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/report")
		})
	}
}
