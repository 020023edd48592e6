package placement

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/testkit/poll"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// process is one server or worker as far as placement goes: its own ent client (and
// connection pool), its snapshot cache and its Placer.
type process struct {
	db     *infra.Database
	snaps  *Snapshots
	placer *Placer
}

// redisClient connects to the tests' Redis (or url) and closes after the test.
func redisClient(tb testing.TB, url string) redis.UniversalClient {
	tb.Helper()
	opts, err := redis.ParseURL(url)
	if err != nil {
		tb.Fatal(err)
	}
	c := redis.NewClient(opts)
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// newProcess opens the package's database with a snapshot cache on channel of the Redis at
// url, subscribed until the test ends.
func newProcess(tb testing.TB, url, channel string, cfg Config) *process {
	tb.Helper()
	db := openPostgres(tb)
	snaps := NewSnapshots(SnapshotsConfig{Client: db.Client, Redis: redisClient(tb, url), Channel: channel})
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	if err := snaps.Run(ctx); err != nil {
		tb.Fatal(err)
	}
	cfg.Snapshots = snaps
	return &process{db: db, snaps: snaps, placer: New(cfg)}
}

// channel is a pub/sub channel of the test's own.
func channel(tb testing.TB) string {
	return fmt.Sprintf("virtflow:placement:test:%s:%d", tb.Name(), time.Now().UnixNano())
}

// createVM places a VM named name through p.
func (p *process) createVM(s *placementtest.Site, f *ent.Flavor, name string) (*ent.VirtualMachine, error) {
	return p.placer.CreateVM(placementtest.Ctx(), p.db.Client,
		ent.CreateVirtualMachineInput{Name: name, TenantID: s.Tenant, RegionID: s.Region, FlavorID: f.ID})
}

// race sends n creates at once, alternating between the processes, after each process
// cached the region (a first placement), and counts the outcomes by error code ("" placed).
func race(t *testing.T, ps []*process, s *placementtest.Site, f *ent.Flavor, n int) map[string]int {
	t.Helper()
	out := map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			_, err := ps[i%len(ps)].createVM(s, f, fmt.Sprintf("%s-race-%d", s.Prefix, i))
			code := ""
			if e, ok := apierr.As(err); ok {
				code = string(e.Code)
			} else if err != nil {
				code = err.Error()
			}
			mu.Lock()
			out[code]++
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	return out
}

// TestSnapshotsNeverOvercommit: two processes with warm caches send 120 creates at once for
// the last 10 free slots of a region, then 120 for a tenant whose quota has room for
// exactly 10: the caches are behind all along, and still exactly 10 are placed each time
// and no node or quota is over its limit.
func TestSnapshotsNeverOvercommit(t *testing.T) {
	ch := channel(t)
	ps := []*process{newProcess(t, testdb.RedisURL(), ch, Config{}), newProcess(t, testdb.RedisURL(), ch, Config{})}
	ctx := placementtest.Ctx()

	t.Run("capacity", func(t *testing.T) {
		s := build(t, ps[0].db.Client, placementtest.Spec{Racks: 6, HostsPerRack: 1, CPU: 4, MemoryMB: 65536, DiskGB: 1000, Cores: 2})
		f, err := s.Flavor(ctx, 2, 1024, 10, false)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range ps { // warm both caches: 2 of the 12 slots
			if _, err := p.createVM(s, f, fmt.Sprintf("%s-warm-%d", s.Prefix, i)); err != nil {
				t.Fatal(err)
			}
		}
		if got := race(t, ps, s, f, 120); got[""] != 10 || got[string(apierr.CodeNoCapacity)] != 110 {
			t.Errorf("outcomes %v; want 10 placed and 110 NO_CAPACITY", got)
		}
		checkBooks(t, s)
	})
	t.Run("quota", func(t *testing.T) {
		s := build(t, ps[0].db.Client, placementtest.Spec{Racks: 4, HostsPerRack: 2, CPU: 64, MemoryMB: 65536, DiskGB: 1000, Cores: 32})
		f, err := s.Flavor(ctx, 2, 1024, 10, false)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Quota(ctx, s.Tenant, 24, 0); err != nil {
			t.Fatal(err)
		}
		for i, p := range ps { // 4 of the 24 vCPUs
			if _, err := p.createVM(s, f, fmt.Sprintf("%s-warm-%d", s.Prefix, i)); err != nil {
				t.Fatal(err)
			}
		}
		if got := race(t, ps, s, f, 120); got[""] != 10 || got[string(apierr.CodeQuotaExceeded)] != 110 {
			t.Errorf("outcomes %v; want 10 placed and 110 QUOTA_EXCEEDED", got)
		}
		checkBooks(t, s)
	})
	for i, p := range ps {
		if p.snaps.Refreshes() == 0 {
			t.Errorf("process %d never refreshed its cache from events", i)
		}
	}
}

// TestSnapshotsFollowOtherProcesses: what one process changes reaches the other's cache
// through Redis: nodes cordoned there are not chosen here, and a freed node is seen free.
func TestSnapshotsFollowOtherProcesses(t *testing.T) {
	ch := channel(t)
	a, b := newProcess(t, testdb.RedisURL(), ch, Config{}), newProcess(t, testdb.RedisURL(), ch, Config{})
	ctx := placementtest.Ctx()
	s := build(t, a.db.Client, placementtest.Spec{Racks: 4, HostsPerRack: 1, CPU: 8, MemoryMB: 65536, DiskGB: 1000, Cores: 4})
	f, err := s.Flavor(ctx, 2, 1024, 10, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.createVM(s, f, s.Prefix+"-warm"); err != nil {
		t.Fatal(err)
	}
	loads := a.snaps.Loads()
	keep := s.Nodes[3].ID
	for _, n := range s.Nodes[:3] {
		if err := b.db.Client.ComputeNode.UpdateOneID(n.ID).SetSchedulable(false).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	poll.Until(t, 5*time.Second, func() error {
		a.snaps.mu.Lock()
		defer a.snaps.mu.Unlock()
		if d := a.snaps.regions[s.Region].dirtyNodes; len(d) < 3 {
			return fmt.Errorf("%d of the 3 cordoned nodes marked in the other process's cache", len(d))
		}
		return nil
	})
	for i := range 3 {
		vm, err := a.createVM(s, f, fmt.Sprintf("%s-after-%d", s.Prefix, i))
		if err != nil {
			t.Fatal(err)
		}
		if n := vm.QueryNode().OnlyIDX(ctx); n != keep {
			t.Errorf("VM placed on node %d, a node the other process cordoned; want %d", n, keep)
		}
	}
	if a.snaps.Loads() != loads {
		t.Errorf("%d full reads after the cordons; want none (the changed nodes are read again)", a.snaps.Loads()-loads)
	}
	checkBooks(t, s)
}

// TestSnapshotsReloadAfterReconnect: when Redis drops the subscription, the cache is not
// trusted until it is back, and then the region is read again in full; so is a region older
// than MaxAge.
func TestSnapshotsReloadAfterReconnect(t *testing.T) {
	url := testdb.PrivateRedis(t)
	now := time.Now()
	var clock sync.Mutex
	db := openPostgres(t)
	rdb := redisClient(t, url)
	snaps := NewSnapshots(SnapshotsConfig{Client: db.Client, Redis: rdb, Channel: channel(t), MaxAge: time.Hour,
		Clock: func() time.Time { clock.Lock(); defer clock.Unlock(); return now }})
	runCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := snaps.Run(runCtx); err != nil {
		t.Fatal(err)
	}
	p := &process{db: db, snaps: snaps, placer: New(Config{Snapshots: snaps})}
	ctx := placementtest.Ctx()
	s := build(t, db.Client, placementtest.Spec{Racks: 2, HostsPerRack: 2, CPU: 64, MemoryMB: 65536, DiskGB: 1000, Cores: 32})
	f, err := s.Flavor(ctx, 1, 512, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	place := func(name string) {
		t.Helper()
		if _, err := p.createVM(s, f, s.Prefix+"-"+name); err != nil {
			t.Fatal(err)
		}
	}
	place("first")
	place("second")
	if n := snaps.Loads(); n != 1 {
		t.Fatalf("%d full reads for two placements; want 1", n)
	}

	// Redis drops every pub/sub connection: go-redis reconnects and subscribes again.
	admin := redisClient(t, url)
	if err := admin.ClientKillByFilter(ctx, "TYPE", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 10*time.Second, func() error {
		place(fmt.Sprintf("reconnect-%d", time.Now().UnixNano()))
		if n := snaps.Loads(); n < 2 {
			return fmt.Errorf("%d full reads since the subscription was dropped; want a second", n)
		}
		return nil
	})

	loads := snaps.Loads()
	clock.Lock()
	now = now.Add(2 * time.Hour)
	clock.Unlock()
	snaps.expire()
	place("old")
	if n := snaps.Loads(); n != loads+1 {
		t.Errorf("%d full reads after MaxAge; want 1", n-loads)
	}
	checkBooks(t, s)
}

// TestCreateVMStatements: with a warm cache a VM is created in a constant, small number of
// statements (the budget of issue 18: 12, without the address allocation of a network),
// whatever the size of the region; without the cache the snapshot alone takes up to ten.
func TestCreateVMStatements(t *testing.T) {
	const budget = 12
	db := openPostgres(t)
	client, n := counting(db)
	snaps := NewSnapshots(SnapshotsConfig{Client: client, Redis: redisClient(t, testdb.RedisURL()), Channel: channel(t)})
	runCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := snaps.Run(runCtx); err != nil {
		t.Fatal(err)
	}
	cached, uncached := New(Config{Snapshots: snaps}), New(Config{})
	ctx := placementtest.Ctx()
	measure := func(spec placementtest.Spec) (warm, cold int64) {
		s := build(t, db.Client, spec)
		f, err := s.Flavor(ctx, 1, 512, 1, false)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Quota(ctx, s.Tenant, 1000, 0); err != nil {
			t.Fatal(err)
		}
		create := func(p *Placer, name string) int64 {
			n.Store(0)
			if _, err := p.CreateVM(ctx, client, ent.CreateVirtualMachineInput{Name: s.Prefix + name,
				TenantID: s.Tenant, RegionID: s.Region, FlavorID: f.ID}); err != nil {
				t.Fatal(err)
			}
			return n.Load()
		}
		create(cached, "-warm")
		warm = create(cached, "-1") // its own changes were reserved: nothing to read again
		cold = create(uncached, "-2")
		return warm, cold
	}
	smallWarm, smallCold := measure(placementtest.Spec{Racks: 2, HostsPerRack: 2, CPU: 64, MemoryMB: 65536, DiskGB: 1000, Cores: 32})
	largeWarm, largeCold := measure(placementtest.Spec{Racks: 20, HostsPerRack: 10, PowerZones: 4, NetworkZones: 2,
		CPU: 64, MemoryMB: 65536, DiskGB: 1000, Cores: 32})
	t.Logf("statements per CreateVM (BEGIN and COMMIT included): cached %d (4 nodes) and %d (200 nodes); loading in the transaction %d and %d",
		smallWarm, largeWarm, smallCold, largeCold)
	if largeWarm != smallWarm || smallWarm > budget {
		t.Errorf("CreateVM with a warm cache took %d statements for 4 nodes and %d for 200; want the same, at most %d",
			smallWarm, largeWarm, budget)
	}
}
