package ipam_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/virtflow/virtflow/domain/ipam"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/store/dberr"
)

// The figure: 1,000 allocations in a /22 from 32 goroutines at once.
const (
	raceAllocations = 1000
	raceWorkers     = 32
	raceCIDR        = "10.20.0.0/22"
)

// raceResult is what a concurrent run returned.
type raceResult struct {
	addrs   []string // the addresses handed out, one per successful allocation
	errs    map[string]int
	elapsed time.Duration
}

// duplicates counts addresses handed out more than once.
func (r raceResult) duplicates() int {
	seen := map[string]bool{}
	d := 0
	for _, a := range r.addrs {
		if seen[a] {
			d++
		}
		seen[a] = true
	}
	return d
}

// race runs total calls of alloc from workers goroutines, all started at once.
func race(total, workers int, alloc func(i int) (*ent.IPAddress, error)) raceResult {
	var (
		next  atomic.Int64
		mu    sync.Mutex
		wg    sync.WaitGroup
		res   = raceResult{errs: map[string]int{}}
		start = make(chan struct{})
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for {
				i := int(next.Add(1)) - 1
				if i >= total {
					return
				}
				ip, err := alloc(i)
				mu.Lock()
				if err != nil {
					key := err.Error()
					if e := dberr.Classify(err); e != nil {
						key = string(e.Code) + " " + e.Field
					}
					res.errs[key]++
				} else {
					res.addrs = append(res.addrs, ip.Address)
				}
				mu.Unlock()
			}
		}()
	}
	began := time.Now()
	close(start)
	wg.Wait()
	res.elapsed = time.Since(began)
	return res
}

// stored returns how many address rows n has and how many distinct addresses among them,
// counted by PostgreSQL itself.
func (f *fixture) stored(n *ent.Network) (rows, distinct int) {
	f.t.Helper()
	err := f.env.DB.DB.QueryRow(`SELECT count(*), count(DISTINCT address) FROM ip_addresses WHERE network_ip_addresses = $1`, n.ID).
		Scan(&rows, &distinct)
	if err != nil {
		f.t.Fatal(err)
	}
	return rows, distinct
}

// TestConcurrentAllocations: 1,000 allocations from 32 goroutines, each in its own
// transaction (as from several server replicas), hand out 1,000 distinct addresses — the
// 1,000 lowest after the gateway — and never had to retry: the network row lock made them
// take turns, so no insert ever found its address taken.
func TestConcurrentAllocations(t *testing.T) {
	f := newFixture(t)
	n := f.network(raceCIDR, "10.20.0.1")
	var retries atomic.Int64
	res := race(raceAllocations, raceWorkers, func(int) (*ent.IPAddress, error) {
		return ipam.AllocateWith(f.ctx, f.c, ipam.Request{NetworkID: n.ID}, true, ipam.MaxAttempts, nil, func() { retries.Add(1) })
	})
	if len(res.errs) > 0 {
		t.Errorf("failed allocations: %v", res.errs)
	}
	if len(res.addrs) != raceAllocations || res.duplicates() != 0 {
		t.Fatalf("%d allocations returned, %d of them duplicates; want %d distinct", len(res.addrs), res.duplicates(), raceAllocations)
	}
	if rows, distinct := f.stored(n); rows != raceAllocations || distinct != raceAllocations {
		t.Fatalf("the database holds %d addresses, %d distinct; want %d", rows, distinct, raceAllocations)
	}
	// The lowest free first: 10.20.0.2 … 10.20.3.233 (1,000 addresses after the gateway).
	u, err := ipam.Utilization(f.ctx, f.c, n)
	if err != nil {
		t.Fatal(err)
	}
	free, _ := ipam.FreeRanges(f.ctx, f.c, n, 10)
	if u.Allocated != raceAllocations+1 || len(free) != 1 || free[0].First.String() != "10.20.3.234" {
		t.Errorf("after the race: %+v, free %v; want the lowest 1,000 addresses taken", u, free)
	}
	if r := retries.Load(); r != 0 {
		t.Errorf("%d retries: allocations under the network lock should never collide", r)
	}
}

// TestConcurrentAllocationsWithoutLock shows what the lock is for, by taking it away and
// making every allocation read the network before any of them inserts. They all pick the same
// address: the unique index lets exactly one of them have it. With one attempt each, the rest
// fail; with retries, they all get distinct addresses, at the price of reading again.
func TestConcurrentAllocationsWithoutLock(t *testing.T) {
	f := newFixture(t)
	const racers = 8

	// barrier makes the first insert of every racer wait until all of them have read.
	barrier := func() func() func() {
		var wg sync.WaitGroup
		wg.Add(racers)
		return func() func() {
			first := true
			return func() {
				if !first {
					return
				}
				first = false
				wg.Done()
				done := make(chan struct{})
				go func() { wg.Wait(); close(done) }()
				select {
				case <-done:
				case <-time.After(30 * time.Second):
					t.Error("racers never all reached the insert")
				}
			}
		}
	}

	t.Run("one attempt each: one wins, the rest collide", func(t *testing.T) {
		n := f.network("10.21.0.0/24", "10.21.0.1")
		b := barrier()
		res := race(racers, racers, func(int) (*ent.IPAddress, error) {
			return ipam.AllocateWith(f.ctx, f.c, ipam.Request{NetworkID: n.ID}, false, 1, b(), nil)
		})
		if len(res.addrs) != 1 || res.addrs[0] != "10.21.0.2" || res.errs["CONFLICT networkID"] != racers-1 {
			t.Fatalf("got %v and errors %v; want one 10.21.0.2 and %d CONFLICTs", res.addrs, res.errs, racers-1)
		}
		if rows, _ := f.stored(n); rows != 1 {
			t.Fatalf("the database holds %d addresses, want 1", rows)
		}
	})

	t.Run("with retries: all distinct, after retrying", func(t *testing.T) {
		n := f.network("10.21.1.0/24", "10.21.1.1")
		b := barrier()
		var retries atomic.Int64
		res := race(racers, racers, func(int) (*ent.IPAddress, error) {
			return ipam.AllocateWith(f.ctx, f.c, ipam.Request{NetworkID: n.ID}, false, racers, b(), func() { retries.Add(1) })
		})
		if len(res.errs) > 0 || len(res.addrs) != racers || res.duplicates() != 0 {
			t.Fatalf("got %v (errors %v); want %d distinct addresses", res.addrs, res.errs, racers)
		}
		if r := retries.Load(); r < racers-1 {
			t.Errorf("%d retries; all racers read before anyone inserted, so at least %d had to retry", r, racers-1)
		}
	})
}

// BenchmarkConcurrentAllocations measures the figure: 1,000 allocations in a fresh
// /22 from 32 goroutines, each in its own transaction, on PostgreSQL. It reports allocations
// per second and the addresses handed out twice (must be 0).
func BenchmarkConcurrentAllocations(b *testing.B) {
	f := newFixture(b)
	var (
		total   time.Duration
		dups    int
		retries atomic.Int64
	)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		n := f.network(raceCIDR, "10.20.0.1")
		b.StartTimer()
		res := race(raceAllocations, raceWorkers, func(int) (*ent.IPAddress, error) {
			return ipam.AllocateWith(f.ctx, f.c, ipam.Request{NetworkID: n.ID}, true, ipam.MaxAttempts, nil, func() { retries.Add(1) })
		})
		b.StopTimer()
		if len(res.errs) > 0 || len(res.addrs) != raceAllocations {
			b.Fatalf("%d allocations, errors %v", len(res.addrs), res.errs)
		}
		rows, distinct := f.stored(n)
		dups += res.duplicates() + rows - distinct
		total += res.elapsed
		// Leave the table as the next round found it: ip_addresses has no index on its
		// network column, so every round would otherwise read more rows than the last.
		if _, err := f.env.DB.DB.Exec(`DELETE FROM ip_addresses WHERE network_ip_addresses = $1`, n.ID); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(raceAllocations*b.N)/total.Seconds(), "allocs/s")
	b.ReportMetric(float64(dups), "duplicates")
	b.ReportMetric(float64(retries.Load()), "retries")
	b.ReportMetric(0, "ns/op")
}
