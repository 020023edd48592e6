package metering_test

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/virtflow/virtflow/domain/metering"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/ent/reservationinterval"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// flavorSpec is a flavor of the property test and how it is priced.
type flavorSpec struct {
	vcpus     int
	memMB     int64
	dedicated bool
	ioLimited bool // disk_iops_limit 500: IO class "iops=500,mbps=-,net=-"
	ownPrice  bool // a FLAVOR price; otherwise vCPU and memory prices
}

var propertyFlavors = []flavorSpec{
	{vcpus: 2, memMB: 4096, ownPrice: true},
	{vcpus: 1, memMB: 1536},
	{vcpus: 4, memMB: 8192, dedicated: true, ioLimited: true},
	{vcpus: 8, memMB: 16384, dedicated: true, ioLimited: true, ownPrice: true},
}

var hostModels = []string{"R650", "R750", "EPYC-9654"}

// seg is one state of a VM as the simulation knows it: [start, end) with its flavor and
// node (indexes), end 0 while it still runs.
type seg struct {
	start, end   int64
	flavor, node int
}

// life is one VM's lifecycle as the simulation lived it, independent of the ledger.
type life struct {
	id   int
	name string
	segs []seg
}

func (l *life) alive() bool { return len(l.segs) > 0 && l.segs[len(l.segs)-1].end == 0 }

// TestLedgerProperty runs 10,000 random VM lifecycles — create, resize, move, stop and
// start, delete, some in transactions that roll back — in four concurrent workers, each
// with its own simulated clock, while price changes (some backdated) are added. Then,
// for every VM, the ledger's intervals must be exactly the states the simulation committed
// (same seconds, flavor and host model, contiguous), and the rated total must equal an
// independent computation in exact rationals.
func TestLedgerProperty(t *testing.T) {
	c := openPostgres(t)
	ctx := placementtest.Ctx()
	site, err := placementtest.Build(ctx, c, placementtest.Spec{Racks: 2, HostsPerRack: 3, CPU: 1 << 16, MemoryMB: 1 << 30, DiskGB: 1 << 20, Cores: 64})
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range site.Nodes {
		if err := c.Host.Update().Where(host.ID(n.HostID)).SetModel(hostModels[i%len(hostModels)]).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	flavors := make([]*ent.Flavor, len(propertyFlavors))
	for i, f := range propertyFlavors {
		fl, err := site.Flavor(ctx, f.vcpus, f.memMB, 10, f.dedicated)
		if err != nil {
			t.Fatal(err)
		}
		if f.ioLimited {
			if fl, err = fl.Update().SetDiskIopsLimit(500).Save(ctx); err != nil {
				t.Fatal(err)
			}
		}
		flavors[i] = fl
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	base := []metering.PriceEntry{
		{Kind: metering.PriceVCPU, Key: "SHARED", AmountMicro: 11_000},
		{Kind: metering.PriceVCPU, Key: "DEDICATED", AmountMicro: 29_000},
		{Kind: metering.PriceMemoryGB, AmountMicro: 3_300},
		{Kind: metering.PriceHostModel, Key: "R750", MultiplierPPM: 1_250_000},
		{Kind: metering.PriceHostModel, Key: "EPYC-9654", MultiplierPPM: 1_333_333},
		{Kind: metering.PriceIOClass, Key: "iops=500,mbps=-,net=-", AmountMicro: 4_000},
		{Kind: metering.PriceFlavor, Key: flavors[0].Name, AmountMicro: 41_000},
		{Kind: metering.PriceFlavor, Key: flavors[3].Name, AmountMicro: 333_333},
	}
	for _, e := range base {
		e.EffectiveFrom = t0.Add(-time.Hour)
		if _, err := metering.AddPrice(ctx, c, e); err != nil {
			t.Fatal(err)
		}
	}

	const workers, perWorker = 4, 2500
	lives := make([][]*life, workers)
	ends := make([]int64, workers)
	var wg sync.WaitGroup
	errs := make(chan error, workers+1)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, end, err := simulate(ctx, c, site, flavors, w, perWorker, t0.Unix())
			lives[w], ends[w] = l, end
			if err != nil {
				errs <- fmt.Errorf("worker %d: %w", w, err)
			}
		}()
	}
	// Price changes while the workers run: effective at random instants of the simulated
	// months, some before instants already recorded (a correction).
	wg.Add(1)
	go func() {
		defer wg.Done()
		r := rand.New(rand.NewPCG(99, 1))
		for i := range 40 {
			e := base[r.IntN(len(base))]
			e.EffectiveFrom = t0.Add(time.Duration(r.Int64N(12*86400)) * time.Second)
			if e.Kind == metering.PriceHostModel {
				e.MultiplierPPM = 900_000 + r.Int64N(600_000)
			} else {
				e.AmountMicro = 1 + r.Int64N(400_000)
			}
			if _, err := metering.AddPrice(ctx, c, e); err != nil && !ent.IsConstraintError(err) {
				errs <- fmt.Errorf("price change %d: %w", i, err)
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	tEnd := slices.Max(ends) + 1

	all := slices.Concat(lives...)
	if len(all) != workers*perWorker {
		t.Fatalf("%d lifecycles committed, want %d", len(all), workers*perWorker)
	}
	ivs, err := c.ReservationInterval.Query().Where(reservationinterval.TenantID(site.Tenant)).
		Order(ent.Asc(reservationinterval.FieldResourceID), ent.Asc(reservationinterval.FieldStartedAt), ent.Asc(reservationinterval.FieldID)).All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byVM := map[int][]*ent.ReservationInterval{}
	for _, iv := range ivs {
		byVM[iv.ResourceID] = append(byVM[iv.ResourceID], iv)
	}
	if len(byVM) != len(all) {
		t.Errorf("the ledger has intervals of %d VMs, the simulation created %d", len(byVM), len(all))
	}
	for _, l := range all {
		got := byVM[l.id]
		if len(got) != len(l.segs) {
			t.Fatalf("VM %s: %d intervals in the ledger, %d states lived: %v vs %v", l.name, len(got), len(l.segs), got, l.segs)
		}
		for i, s := range l.segs {
			iv := got[i]
			end := int64(0)
			if iv.EndedAt != nil {
				end = iv.EndedAt.Unix()
			}
			if iv.StartedAt.Unix() != s.start || end != s.end || iv.Flavor != flavors[s.flavor].Name ||
				iv.HostModel != hostModels[s.node%len(hostModels)] {
				t.Fatalf("VM %s interval %d: ledger [%d, %d) %s on %s, lived [%d, %d) %s on %s", l.name, i,
					iv.StartedAt.Unix(), end, iv.Flavor, iv.HostModel, s.start, s.end, flavors[s.flavor].Name, hostModels[s.node%len(hostModels)])
			}
		}
	}

	entries, err := c.Price.Query().All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	prices, err := metering.LoadPrices(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]metering.Row, len(ivs))
	for i, iv := range ivs {
		rows[i] = metering.RowOf(iv)
	}
	rep := metering.Rate(prices, rows, t0.Unix(), tEnd, tEnd, []metering.GroupBy{metering.GroupResource})
	want, wantByVM := expectedTotal(all, flavors, entries, tEnd)
	for _, line := range rep.Lines {
		if w := wantByVM[line.Resource]; w != line.AmountMicro {
			t.Errorf("VM %d: rated %d µ, independently %d µ", line.Resource, line.AmountMicro, w)
		}
	}
	if rep.TotalMicro != want {
		t.Errorf("rated total %s, independent computation %s", metering.FormatMicro(rep.TotalMicro), metering.FormatMicro(want))
	}
	// The same through the API's path, on a window cut in the middle of intervals.
	from, to := t0.Add(2*24*time.Hour+13*time.Second), t0.Add(6*24*time.Hour+3*time.Hour+7*time.Second)
	u, err := metering.Usage(ctx, c, site.Tenant, from, to, time.Unix(tEnd, 0), []metering.GroupBy{metering.GroupResource})
	if err != nil {
		t.Fatal(err)
	}
	cut := clip(all, from.Unix(), to.Unix())
	if w, _ := expectedTotal(cut, flavors, entries, to.Unix()); u.TotalMicro != w {
		t.Errorf("usage over [%s, %s): %d µ, independently %d µ", from, to, u.TotalMicro, w)
	}
	t.Logf("%d lifecycles, %d intervals, total %s %s", len(all), len(ivs), metering.FormatMicro(rep.TotalMicro), rep.Currency)
}

// clip is the lives cut to [from, to).
func clip(all []*life, from, to int64) []*life {
	var out []*life
	for _, l := range all {
		c := &life{id: l.id, name: l.name}
		for _, s := range l.segs {
			e := s.end
			if e == 0 || e > to {
				e = to
			}
			st := max(s.start, from)
			if st < e {
				c.segs = append(c.segs, seg{start: st, end: e, flavor: s.flavor, node: s.node})
			}
		}
		out = append(out, c)
	}
	return out
}

// expectedTotal prices the lives independently of package metering: every second of every
// state at the price entries in effect (found by a linear scan over all entries), in exact
// rationals, each VM rounded half up to the millionth.
func expectedTotal(all []*life, flavors []*ent.Flavor, entries []*ent.Price, end int64) (int64, map[int]int64) {
	priceAt := func(kind, key string, t int64) (*ent.Price, bool) {
		var best *ent.Price
		for _, e := range entries {
			if string(e.Kind) == kind && e.Key == key && e.EffectiveFrom.Unix() <= t && (best == nil || e.EffectiveFrom.After(best.EffectiveFrom)) {
				best = e
			}
		}
		return best, best != nil
	}
	ratePerHour := func(s seg, t int64) *big.Rat {
		f, spec := flavors[s.flavor], propertyFlavors[s.flavor]
		r := new(big.Rat)
		if p, ok := priceAt("FLAVOR", f.Name, t); ok {
			r.SetInt64(p.AmountMicro)
		} else {
			policy := "SHARED"
			if spec.dedicated {
				policy = "DEDICATED"
			}
			if p, ok := priceAt("VCPU", policy, t); ok {
				r.SetInt64(int64(spec.vcpus) * p.AmountMicro)
			}
			if p, ok := priceAt("MEMORY_GB", "", t); ok {
				r.Add(r, big.NewRat(spec.memMB*p.AmountMicro, 1024))
			}
		}
		if p, ok := priceAt("HOST_MODEL", hostModels[s.node%len(hostModels)], t); ok {
			r.Mul(r, big.NewRat(p.MultiplierPpm, 1_000_000))
		}
		if spec.ioLimited {
			if p, ok := priceAt("IO_CLASS", "iops=500,mbps=-,net=-", t); ok {
				r.Add(r, big.NewRat(p.AmountMicro, 1))
			}
		}
		return r
	}
	var times []int64
	for _, e := range entries {
		times = append(times, e.EffectiveFrom.Unix())
	}
	slices.Sort(times)
	total := int64(0)
	byVM := map[int]int64{}
	for _, l := range all {
		sum := new(big.Rat)
		for _, s := range l.segs {
			e := s.end
			if e == 0 {
				e = end
			}
			cuts := []int64{s.start}
			for _, tm := range times {
				if tm > s.start && tm < e {
					cuts = append(cuts, tm)
				}
			}
			cuts = append(cuts, e)
			for i := 0; i+1 < len(cuts); i++ {
				part := ratePerHour(s, cuts[i])
				part.Mul(part, big.NewRat(cuts[i+1]-cuts[i], 3600))
				sum.Add(sum, part)
			}
		}
		// Round half up: floor(sum + 1/2).
		sum.Add(sum, big.NewRat(1, 2))
		q := new(big.Int).Quo(sum.Num(), sum.Denom())
		byVM[l.id] = q.Int64()
		total += q.Int64()
	}
	return total, byVM
}

// simulate lives n VM lifecycles of worker w from t0 on, in ticks: each tick is one
// transaction that creates VMs, resizes, moves, stops, starts and deletes some, recording
// each change in the ledger as the reservation paths do (one call per change, for all VMs
// of the change at once), and one tick in twenty rolls back. The simulated clock advances
// up to 4 h between ticks, or not at all (several changes in one second). VMs alive at the
// end keep their open intervals. It returns the lives as committed and the last instant.
func simulate(ctx context.Context, c *ent.Client, site *placementtest.Site, flavors []*ent.Flavor, w, n int, t0 int64) ([]*life, int64, error) {
	r := rand.New(rand.NewPCG(uint64(w), 7))
	var lives []*life
	now := t0
	created := 0
	for created < n {
		at := time.Unix(now, 0)
		tx, err := c.Tx(ctx)
		if err != nil {
			return nil, 0, err
		}
		tc := tx.Client()
		type change struct {
			l    *life
			next seg
			gone bool
		}
		var changes []change
		var fresh []*life
		err = func() error {
			// Creates.
			k := min(n-created, r.IntN(40))
			if k > 0 {
				bs := make([]*ent.VirtualMachineCreate, k)
				segs := make([]seg, k)
				for i := range k {
					f, nd := r.IntN(len(flavors)), r.IntN(len(site.Nodes))
					segs[i] = seg{start: now, flavor: f, node: nd}
					bs[i] = tc.VirtualMachine.Create().SetName(fmt.Sprintf("w%d-%d", w, created+i)).
						SetTenantID(site.Tenant).SetRegionID(site.Region).SetFlavorID(flavors[f].ID).
						SetNodeID(site.Nodes[nd].ID).SetClusterID(site.Cluster).
						SetAllocatedVcpus(flavors[f].Vcpus).SetAllocatedMemoryMB(flavors[f].MemoryMB)
				}
				vms, err := tc.VirtualMachine.CreateBulk(bs...).Save(ctx)
				if err != nil {
					return err
				}
				ids := make([]int, k)
				for i, vm := range vms {
					ids[i] = vm.ID
					fresh = append(fresh, &life{id: vm.ID, name: vm.Name, segs: []seg{segs[i]}})
				}
				if err := metering.OpenVMs(ctx, tc, at, ids...); err != nil {
					return err
				}
			}
			// Resizes, moves, stops and starts, deletes of VMs alive before this tick.
			var resized, moved, deleted, stopped, started []int
			for _, l := range lives {
				if !l.alive() {
					continue
				}
				cur := l.segs[len(l.segs)-1]
				switch x := r.IntN(100); {
				case x < 4:
					next := cur
					next.flavor = (cur.flavor + 1 + r.IntN(len(flavors)-1)) % len(flavors)
					f := flavors[next.flavor]
					if err := tc.VirtualMachine.UpdateOneID(l.id).SetFlavorID(f.ID).SetAllocatedVcpus(f.Vcpus).
						SetAllocatedMemoryMB(f.MemoryMB).Exec(ctx); err != nil {
						return err
					}
					resized = append(resized, l.id)
					changes = append(changes, change{l: l, next: next})
				case x < 8:
					next := cur
					next.node = (cur.node + 1 + r.IntN(len(site.Nodes)-1)) % len(site.Nodes)
					if err := tc.VirtualMachine.UpdateOneID(l.id).SetNodeID(site.Nodes[next.node].ID).Exec(ctx); err != nil {
						return err
					}
					moved = append(moved, l.id)
					changes = append(changes, change{l: l, next: next})
				case x < 12:
					stopped = append(stopped, l.id)
				case x < 16:
					started = append(started, l.id)
				case x < 22:
					deleted = append(deleted, l.id)
					changes = append(changes, change{l: l, gone: true})
				}
			}
			if err := metering.ReopenVMs(ctx, tc, at, slices.Concat(resized, moved)...); err != nil {
				return err
			}
			// Stopped and started VMs keep their reservation: no ledger call.
			if len(stopped) > 0 {
				if err := tc.VirtualMachine.Update().Where(virtualmachine.IDIn(stopped...)).SetStatus(virtualmachine.StatusStopped).Exec(ctx); err != nil {
					return err
				}
			}
			if len(started) > 0 {
				if err := tc.VirtualMachine.Update().Where(virtualmachine.IDIn(started...)).SetStatus(virtualmachine.StatusActive).Exec(ctx); err != nil {
					return err
				}
			}
			if len(deleted) > 0 {
				if err := metering.Close(ctx, tc, at, metering.KindVM, deleted...); err != nil {
					return err
				}
				if _, err := tc.VirtualMachine.Delete().Where(virtualmachine.IDIn(deleted...)).Exec(ctx); err != nil {
					return err
				}
			}
			return nil
		}()
		if err != nil {
			_ = tx.Rollback()
			return nil, 0, err
		}
		if r.IntN(20) == 0 {
			if err := tx.Rollback(); err != nil {
				return nil, 0, err
			}
		} else {
			if err := tx.Commit(); err != nil {
				return nil, 0, err
			}
			created += len(fresh)
			lives = append(lives, fresh...)
			for _, ch := range changes {
				last := &ch.l.segs[len(ch.l.segs)-1]
				last.end = now
				if !ch.gone {
					ch.next.start, ch.next.end = now, 0
					ch.l.segs = append(ch.l.segs, ch.next)
				}
			}
		}
		if r.IntN(10) != 0 { // else: the next tick's changes happen in the same second
			now += 1 + r.Int64N(4*3600)
		}
	}
	return lives, now, nil
}
