package placement

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// BenchmarkCreateVMRegion5000 measures Placer.CreateVM (what createVirtualMachine does
// minus HTTP, authentication and the audit row) by 8 concurrent clients in a region of
// 5,000 nodes on PostgreSQL, each client a tenant with its own quota: "cache" decides on
// the process's snapshot cache (as servers do), "load" loads the region in every attempt
// (as before the cache). Metrics: creates/s, statements/create and, for "cache", pgbench-tps
// — pgbench replaying the same writes (insert the VM, the conditional updates of a node and
// the quota, set the VM's node; testdata/create_writes.sql) at 8 clients for 5 s on the same
// database — and ratio, creates/s over pgbench-tps (issue 18: ≥ 400/s and ≥ 0.4×).
//
//	go test ./domain/placement -run '^$' -bench CreateVMRegion5000 -benchtime 2000x
func BenchmarkCreateVMRegion5000(b *testing.B) {
	const clients = 8
	db := openPostgres(b)
	client, statements := counting(db)
	ctx := placementtest.Ctx()
	start := time.Now()
	spec := placementtest.Spec{Racks: 125, HostsPerRack: 8, PowerZones: 25, NetworkZones: 5,
		CPU: 1 << 20, MemoryMB: 1 << 40, DiskGB: 1 << 40, Cores: 1 << 19}
	s := build(b, db.Client, spec)
	for range 4 { // 1,000 nodes at a time: PostgreSQL takes at most 65,535 parameters
		if _, err := s.AddNodes(ctx, s.Cluster, spec); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("5,000-node region built in %v", time.Since(start).Round(time.Millisecond))
	f, err := s.Flavor(ctx, 1, 512, 1, false)
	if err != nil {
		b.Fatal(err)
	}
	tenants := make([]int, clients)
	quotas := make([]int, clients)
	for i := range tenants {
		t, err := db.Client.Tenant.Create().SetName(fmt.Sprintf("%s-t%d", s.Prefix, i)).Save(ctx)
		if err != nil {
			b.Fatal(err)
		}
		q, err := s.Quota(ctx, t.ID, 1<<30, 0)
		if err != nil {
			b.Fatal(err)
		}
		tenants[i], quotas[i] = t.ID, q.ID
	}
	snaps := NewSnapshots(SnapshotsConfig{Client: client, Redis: redisClient(b, testdb.RedisURL()), Channel: channel(b)})
	runCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := snaps.Run(runCtx); err != nil {
		b.Fatal(err)
	}
	var seq atomic.Int64
	run := func(b *testing.B, p *Placer) float64 {
		// Warm: the first placement reads the region.
		if _, err := p.CreateVM(ctx, client, ent.CreateVirtualMachineInput{Name: fmt.Sprintf("w%d", seq.Add(1)),
			TenantID: tenants[0], RegionID: s.Region, FlavorID: f.ID}); err != nil {
			b.Fatal(err)
		}
		var next atomic.Int64
		var wg sync.WaitGroup
		statements.Store(0)
		b.ResetTimer()
		t0 := time.Now()
		for w := range clients {
			wg.Go(func() {
				for next.Add(1) <= int64(b.N) {
					in := ent.CreateVirtualMachineInput{Name: fmt.Sprintf("b%d", seq.Add(1)), TenantID: tenants[w], RegionID: s.Region, FlavorID: f.ID}
					if _, err := p.CreateVM(ctx, client, in); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		elapsed := time.Since(t0)
		b.StopTimer()
		rate := float64(b.N) / elapsed.Seconds()
		b.ReportMetric(rate, "creates/s")
		b.ReportMetric(float64(statements.Load())/float64(b.N), "statements/create")
		b.ReportMetric(0, "ns/op")
		return rate
	}
	b.Run("cache", func(b *testing.B) {
		rate := run(b, New(Config{Snapshots: snaps}))
		tps := pgbench(b, s, f, tenants, quotas, clients)
		b.ReportMetric(tps, "pgbench-tps")
		b.ReportMetric(rate/tps, "ratio")
	})
	b.Run("load", func(b *testing.B) { run(b, New(Config{})) })
	checkBooks(b, s)
}

// pgbench runs testdata/create_writes.sql with pgbench at clients for 5 s against the
// package's database, on the site's nodes and the tenants' quotas, and returns its
// transactions per second. The benchmark is skipped, naming pgbench, when it is not
// installed.
func pgbench(b *testing.B, s *placementtest.Site, f *ent.Flavor, tenants, quotas []int, clients int) float64 {
	b.Helper()
	bin, err := exec.LookPath("pgbench")
	if err != nil {
		b.Skip("pgbench is not installed (apt-get install postgresql-client): no replay to compare with")
	}
	script, err := filepath.Abs("testdata/create_writes.sql")
	if err != nil {
		b.Fatal(err)
	}
	minNode, maxNode := s.Nodes[0].ID, s.Nodes[0].ID
	for _, n := range s.Nodes {
		minNode, maxNode = min(minNode, n.ID), max(maxNode, n.ID)
	}
	// Tenant i has quota i, both created in order: the script picks them by offset.
	for i := range tenants {
		if tenants[i]-tenants[0] != i || quotas[i]-quotas[0] != i {
			b.Fatalf("tenants %v or quotas %v are not consecutive", tenants, quotas)
		}
	}
	args := []string{"-n", "-c", strconv.Itoa(clients), "-j", "2", "-T", "5", "-f", script,
		"-D", fmt.Sprintf("min_node=%d", minNode), "-D", fmt.Sprintf("max_node=%d", maxNode),
		"-D", fmt.Sprintf("min_quota=%d", quotas[0]), "-D", fmt.Sprintf("min_tenant=%d", tenants[0]),
		"-D", fmt.Sprintf("tenants=%d", len(tenants)), "-D", fmt.Sprintf("region=%d", s.Region),
		"-D", fmt.Sprintf("flavor=%d", f.ID), "-D", fmt.Sprintf("cluster=%d", s.Cluster),
		testdb.DSN(b)}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=10")
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("pgbench: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`tps = ([0-9.]+)`).FindSubmatch(out)
	if m == nil {
		b.Fatalf("no tps in pgbench's output:\n%s", out)
	}
	tps, _ := strconv.ParseFloat(string(m[1]), 64)
	return tps
}
