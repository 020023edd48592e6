package metering_test

import (
	"testing"
	"time"

	"github.com/virtflow/virtflow/domain/metering"
)

// TestReadmeExample is the worked example of README.md's "Metering and billing" section:
// the numbers there are the ones this computes.
func TestReadmeExample(t *testing.T) {
	at := func(s string) int64 {
		tm, err := time.Parse(time.DateTime, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm.Unix()
	}
	prices := metering.NewPrices([]metering.PriceEntry{
		{Kind: metering.PriceFlavor, Key: "m1.small", EffectiveFrom: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), AmountMicro: 40_000},
		{Kind: metering.PriceFlavor, Key: "m1.small", EffectiveFrom: time.Date(2026, 11, 4, 0, 0, 0, 0, time.UTC), AmountMicro: 50_000},
		{Kind: metering.PriceHostModel, Key: "R750", EffectiveFrom: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), MultiplierPPM: 1_250_000},
		{Kind: metering.PriceIPAddress, EffectiveFrom: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), AmountMicro: 5_000},
	})
	rows := []metering.Row{
		{Kind: metering.KindVM, ResourceID: 7, Name: "web-1", Flavor: "m1.small", VCPUs: 1, MemoryMB: 2048, CPUPolicy: "SHARED",
			HostModel: "R750", Exclusive: "NONE", Quantity: 1, Start: at("2026-11-03 10:00:00"), End: at("2026-11-05 16:30:20")},
		{Kind: metering.KindIPAddress, ResourceID: 12, Name: "203.0.113.7", Quantity: 1,
			Start: at("2026-11-03 10:00:00"), End: at("2026-11-05 16:30:20")},
	}
	rep := metering.Rate(prices, rows, at("2026-11-01 00:00:00"), at("2026-12-01 00:00:00"), at("2026-12-01 00:00:00"),
		[]metering.GroupBy{metering.GroupResource})
	want := map[metering.Kind]struct {
		seconds int64
		amount  string
	}{
		metering.KindVM:        {196_220, "3.231597"},
		metering.KindIPAddress: {196_220, "0.272528"},
	}
	if len(rep.Lines) != 2 {
		t.Fatalf("lines %+v", rep.Lines)
	}
	for _, l := range rep.Lines {
		w := want[l.Kind]
		if l.Seconds != w.seconds || metering.FormatMicro(l.AmountMicro) != w.amount {
			t.Errorf("%s line: %d s, %s; want %d s, %s", l.Kind, l.Seconds, metering.FormatMicro(l.AmountMicro), w.seconds, w.amount)
		}
	}
	if got := metering.FormatMicro(rep.TotalMicro); got != "3.504125" {
		t.Errorf("total %s, want 3.504125", got)
	}
}

// TestAmounts: amounts parse exactly and print with six places.
func TestAmounts(t *testing.T) {
	for in, want := range map[string]int64{"0.04": 40_000, "12": 12_000_000, "0.000001": 1, ".5": 500_000} {
		if got, err := metering.ParseAmount(in); err != nil || got != want {
			t.Errorf("ParseAmount(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1", "1.0000001", "1e3", "0x10", "1.2.3", "."} {
		if _, err := metering.ParseAmount(bad); err == nil {
			t.Errorf("ParseAmount(%q) accepted", bad)
		}
	}
	if got := metering.FormatMicro(-1_500_001); got != "-1.500001" {
		t.Errorf("FormatMicro(-1500001) = %s", got)
	}
}

// TestDaySplit: grouped by DAY, an interval over midnight is cut there, and a price change
// at noon splits the day's amount without changing its seconds.
func TestDaySplit(t *testing.T) {
	d0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	prices := metering.NewPrices([]metering.PriceEntry{
		{Kind: metering.PriceLoadBalancer, EffectiveFrom: d0, AmountMicro: 3_600_000},
		{Kind: metering.PriceLoadBalancer, EffectiveFrom: d0.Add(36 * time.Hour), AmountMicro: 7_200_000},
	})
	rows := []metering.Row{{Kind: metering.KindLoadBalancer, ResourceID: 1, Name: "lb", Quantity: 1,
		Start: d0.Add(20 * time.Hour).Unix(), End: d0.Add(40 * time.Hour).Unix()}}
	rep := metering.Rate(prices, rows, d0.Unix(), d0.Add(72*time.Hour).Unix(), d0.Add(72*time.Hour).Unix(), []metering.GroupBy{metering.GroupDay})
	// May 1: 4 h at 3.6; May 2: 12 h at 3.6 then 4 h at 7.2.
	want := []struct {
		key     string
		seconds int64
		amount  int64
	}{{"2026-05-01", 4 * 3600, 14_400_000}, {"2026-05-02", 16 * 3600, 43_200_000 + 28_800_000}}
	if len(rep.Lines) != len(want) {
		t.Fatalf("lines %+v", rep.Lines)
	}
	for i, w := range want {
		if l := rep.Lines[i]; l.Key != w.key || l.Seconds != w.seconds || l.AmountMicro != w.amount {
			t.Errorf("line %d: %s %d s %d µ; want %s %d s %d µ", i, l.Key, l.Seconds, l.AmountMicro, w.key, w.seconds, w.amount)
		}
	}
}
