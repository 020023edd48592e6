package app_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// TestQuotaBurstThroughTwoServers is the guarantees issue's failure as it was reported:
// two servers on one PostgreSQL and Redis, a quota set through setQuota on one of them, and
// at once 30 concurrent createVirtualMachine split between both, for each quota dimension,
// with both servers' placement caches warm (each placed a VM before the quota existed). The
// quota allows 3 more VMs: exactly 3 are created and the quota charges exactly its VMs.
func TestQuotaBurstThroughTwoServers(t *testing.T) {
	ctx, cancel := context.WithTimeout(authz.SystemContext(context.Background(), "test"), 3*time.Minute)
	defer cancel()
	dsn, drop, err := testdb.Create(ctx)
	if err != nil {
		testdb.Unavailable(t, err)
	}
	t.Cleanup(drop)
	vars := map[string]string{"DATABASE_URL": dsn, "REDIS_URL": testdb.RedisURL(),
		"VIRTFLOW_REDIS_NAMESPACE": fmt.Sprintf("quota%d", time.Now().UnixNano())}
	servers := []*running{
		start(t, loadConfig(t, []string{"--addr", "127.0.0.1:0", "--data-dir", t.TempDir()}, vars)),
		start(t, loadConfig(t, []string{"--addr", "127.0.0.1:0", "--data-dir", t.TempDir()}, vars)),
	}
	for _, s := range servers {
		defer s.stop(t)
	}
	db, err := infra.OpenDatabase(ctx, dsn, "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	limits := map[string]func(n int) map[string]any{
		"vcpus":      func(n int) map[string]any { return map[string]any{"vcpus": 2 * n} },
		"cpuPercent": func(n int) map[string]any { return map[string]any{"cpuPercent": float64(2*n) * 100 / 64} },
		"memoryMB":   func(n int) map[string]any { return map[string]any{"memoryMB": 1024 * n} },
		"storageGB":  func(n int) map[string]any { return map[string]any{"storageGB": 10 * n} },
	}
	for dim, limit := range limits {
		t.Run(dim, func(t *testing.T) {
			pctx := placementtest.Ctx()
			site, err := placementtest.Build(pctx, db.Client, placementtest.Spec{Racks: 4, HostsPerRack: 2, CPU: 64,
				MemoryMB: 1 << 20, DiskGB: 10000, Cores: 8})
			if err != nil {
				t.Fatal(err)
			}
			f, err := site.Flavor(pctx, 2, 1024, 10, false)
			if err != nil {
				t.Fatal(err)
			}
			create := func(srv *running, name string) gqlResponse {
				return srv.query(t, `mutation($in: CreateVirtualMachineInput!) { createVirtualMachine(input: $in) { id } }`,
					map[string]any{"in": map[string]any{"name": name, "tenantID": fmt.Sprint(site.Tenant),
						"regionID": fmt.Sprint(site.Region), "flavorID": fmt.Sprint(f.ID)}})
			}
			// Both servers' caches hold the region before the quota exists; the quota
			// counts these two VMs and allows 3 more.
			for i, srv := range servers {
				if r := create(srv, fmt.Sprintf("%s-warm-%d", site.Prefix, i)); len(r.Errors) > 0 {
					t.Fatalf("warm-up create: %+v", r.Errors)
				}
			}
			in := limit(5)
			in["tenantID"], in["hostGroupID"] = fmt.Sprint(site.Tenant), fmt.Sprint(site.HostGroup)
			var set struct{ SetQuota struct{ ID string } }
			servers[1].mustQuery(t, `mutation($in: SetQuotaInput!) { setQuota(input: $in) { id } }`, map[string]any{"in": in}, &set)

			var mu sync.Mutex
			outcomes := map[string]int{}
			var wg sync.WaitGroup
			for i := range 30 {
				wg.Go(func() {
					r := create(servers[i%2], fmt.Sprintf("%s-burst-%d", site.Prefix, i))
					code := ""
					if len(r.Errors) > 0 {
						code = fmt.Sprint(r.Errors[0].Extensions["code"])
					}
					mu.Lock()
					outcomes[code]++
					mu.Unlock()
				})
			}
			wg.Wait()
			if outcomes[""] != 3 || outcomes["QUOTA_EXCEEDED"] != 27 {
				t.Errorf("outcomes %v; want 3 created and 27 QUOTA_EXCEEDED", outcomes)
			}
			violations, err := site.Check(pctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range violations {
				t.Error(v)
			}
		})
	}
}
