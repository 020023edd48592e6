package placement

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/quota"
	tenantpkg "github.com/virtflow/virtflow/ent/tenant"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// quotaDim is one dimension of a quota, with the limit that lets exactly n VMs of the
// 2 vCPU / 1,024 MB / 10 GB flavor in (on a group of 64 cores) and no other limit.
type quotaDim struct {
	name  string
	limit func(n int) QuotaInput
}

var quotaDims = []quotaDim{
	{"vcpus", func(n int) QuotaInput { return QuotaInput{VCPUs: new(2 * n)} }},
	// n VMs take 2n vCPUs: 2n × 100 / 64 percent of the group's 64 cores.
	{"cpuPercent", func(n int) QuotaInput { return QuotaInput{CPUPercent: new(float64(2*n) * 100 / 64)} }},
	{"memoryMB", func(n int) QuotaInput { return QuotaInput{MemoryMB: new(int64(1024 * n))} }},
	{"storageGB", func(n int) QuotaInput { return QuotaInput{StorageGB: new(int64(10 * n))} }},
}

// markStale makes p's cached region stale (as a reconnect or MaxAge does), so the next
// decision reads it again in full while others go on.
func (p *process) markStale(region int) {
	p.snaps.mu.Lock()
	defer p.snaps.mu.Unlock()
	if rc := p.snaps.regions[region]; rc != nil {
		rc.stale = true
	}
}

// TestQuotaBurstAfterSetQuota is the failure the guarantees issue reported: a burst of 30
// creates through two processes right after setQuota, for every quota dimension, with the
// caches cold (never loaded), warm (loaded before the quota existed, so they do not know
// it) and refreshed in the middle of the burst. The limit allows 3 VMs: exactly 3 are
// placed, 27 refused with QUOTA_EXCEEDED, and the quota's usage equals its VMs.
func TestQuotaBurstAfterSetQuota(t *testing.T) {
	ctx := placementtest.Ctx()
	for _, dim := range quotaDims {
		for _, cache := range []string{"cold", "warm", "mid-refresh"} {
			t.Run(dim.name+"/"+cache, func(t *testing.T) {
				ch := channel(t)
				ps := []*process{newProcess(t, testdb.RedisURL(), ch, Config{}), newProcess(t, testdb.RedisURL(), ch, Config{})}
				s := build(t, ps[0].db.Client, placementtest.Spec{Racks: 4, HostsPerRack: 2, CPU: 64, MemoryMB: 1 << 20, DiskGB: 10000, Cores: 8})
				f, err := s.Flavor(ctx, 2, 1024, 10, false)
				if err != nil {
					t.Fatal(err)
				}
				want := 3
				if cache != "cold" {
					// Each process places a VM before the quota exists: both caches hold the
					// region and know no quota. The quota counts them, so it allows 3 more.
					for i, p := range ps {
						if _, err := p.createVM(s, f, fmt.Sprintf("%s-warm-%d", s.Prefix, i)); err != nil {
							t.Fatal(err)
						}
					}
				}
				in := dim.limit(want + vmsOf(t, ps[0].db.Client, s.Tenant))
				in.TenantID, in.HostGroupID = s.Tenant, s.HostGroup
				if _, err := SetQuota(ctx, ps[1].db.Client, in); err != nil {
					t.Fatal(err)
				}
				stop := make(chan struct{})
				var refreshes sync.WaitGroup
				if cache == "mid-refresh" {
					refreshes.Go(func() {
						for {
							select {
							case <-stop:
								return
							default:
							}
							for _, p := range ps {
								p.markStale(s.Region)
								p.snaps.invalidate(s.Region, []int{s.Nodes[0].ID, s.Nodes[1].ID}, nil)
							}
						}
					})
				}
				got := race(t, ps, s, f, 30)
				close(stop)
				refreshes.Wait()
				if got[""] != want || got[string(apierr.CodeQuotaExceeded)] != 30-want {
					t.Errorf("outcomes %v; want %d placed and %d QUOTA_EXCEEDED", got, want, 30-want)
				}
				checkBooks(t, s)
			})
		}
	}
}

// vmsOf counts the tenant's VMs.
func vmsOf(tb testing.TB, c *ent.Client, tenant int) int {
	tb.Helper()
	n, err := c.VirtualMachine.Query().Where(virtualmachine.HasTenantWith(tenantpkg.ID(tenant))).Count(placementtest.Ctx())
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// TestQuotaPropertySerialModel compares concurrent bursts with a serial model: in each of
// 12 rounds the quota gets random limits in every dimension (never below what is used),
// then 16 creates of random flavors race through two processes with caches behind. Since a
// burst only adds usage, the outcome must be one some serial order gives: the books hold
// (usage equals the VMs, no limit exceeded), and every request refused with
// QUOTA_EXCEEDED does not fit in what is left at the end (a greedy serial run would have
// refused it too). Between rounds a few VMs are deleted, and now and then the quota is
// deleted and set again (a row the caches do not know); the caches are marked stale
// throughout the bursts.
func TestQuotaPropertySerialModel(t *testing.T) {
	ctx := placementtest.Ctx()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 23))
	ch := channel(t)
	ps := []*process{newProcess(t, testdb.RedisURL(), ch, Config{}), newProcess(t, testdb.RedisURL(), ch, Config{})}
	c := ps[0].db.Client
	s := build(t, c, placementtest.Spec{Racks: 4, HostsPerRack: 2, CPU: 64, MemoryMB: 1 << 20, DiskGB: 10000, Cores: 8})
	cores := s.GroupCores(ctx)
	var flavors []*ent.Flavor
	for _, fs := range [][3]int{{1, 512, 5}, {2, 2048, 10}, {4, 1024, 40}} {
		f, err := s.Flavor(ctx, fs[0], int64(fs[1]), int64(fs[2]), false)
		if err != nil {
			t.Fatal(err)
		}
		flavors = append(flavors, f)
	}
	for round := range 12 {
		q, err := c.Quota.Query().Where(quota.HasTenantWith(tenantpkg.ID(s.Tenant))).Only(ctx)
		if err != nil && !ent.IsNotFound(err) {
			t.Fatal(err)
		}
		var used usage
		if q != nil {
			used = usage{cpu: q.UsedVcpus, mem: q.UsedMemoryMB, disk: q.UsedStorageGB}
			// Now and then the quota goes and comes back as a new row, which the caches
			// learn of only after the burst has begun.
			if rng.IntN(3) == 0 {
				c.Quota.DeleteOneID(q.ID).ExecX(ctx)
			}
		}
		// Random limits at or above usage; 0 (unlimited) now and then.
		in := QuotaInput{TenantID: s.Tenant, HostGroupID: s.HostGroup,
			VCPUs:      new(pick(rng, used.cpu+rng.IntN(16))),
			CPUPercent: new(float64(pick(rng, min(100, (used.cpu+rng.IntN(24))*100/cores+1)))),
			MemoryMB:   new(int64(pick(rng, int(used.mem)+rng.IntN(12)*512))),
			StorageGB:  new(int64(pick(rng, int(used.disk)+rng.IntN(12)*10))),
		}
		if _, err := SetQuota(ctx, ps[rng.IntN(2)].db.Client, in); err != nil {
			t.Fatal(err)
		}
		type result struct {
			f    *ent.Flavor
			code string
		}
		results := make([]result, 16)
		stop := make(chan struct{})
		var stale sync.WaitGroup
		stale.Go(func() { // caches read again in the middle of the burst
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				ps[i%2].markStale(s.Region)
				ps[i%2].snaps.invalidate(s.Region, []int{s.Nodes[i%len(s.Nodes)].ID}, nil)
			}
		})
		var wg sync.WaitGroup
		for i := range results {
			f := flavors[rng.IntN(len(flavors))]
			results[i].f = f
			wg.Go(func() {
				_, err := ps[i%2].createVM(s, f, fmt.Sprintf("%s-r%d-%d", s.Prefix, round, i))
				if e, ok := apierr.As(err); ok {
					results[i].code = string(e.Code)
				} else if err != nil {
					results[i].code = err.Error()
				}
			})
		}
		wg.Wait()
		close(stop)
		stale.Wait()
		checkBooks(t, s)
		q = c.Quota.Query().Where(quota.HasTenantWith(tenantpkg.ID(s.Tenant))).OnlyX(ctx)
		for i, r := range results {
			switch r.code {
			case "":
			case string(apierr.CodeQuotaExceeded):
				if fitsQuota(q, cores, r.f) {
					t.Errorf("round %d, request %d (%d vCPUs, %d MB, %d GB) refused, but it fits what is left of %+v",
						round, i, r.f.Vcpus, r.f.MemoryMB, r.f.DiskGB, q)
				}
			default:
				t.Errorf("round %d, request %d: unexpected outcome %s", round, i, r.code)
			}
		}
		if t.Failed() {
			t.Fatalf("seed %d", seed)
		}
		// Delete a few VMs so the next rounds have room.
		vms := c.VirtualMachine.Query().Where(virtualmachine.HasTenantWith(tenantpkg.ID(s.Tenant))).IDsX(ctx)
		for _, id := range vms {
			if rng.IntN(3) == 0 {
				if err := ps[rng.IntN(2)].placer.DeleteVM(ctx, c, id); err != nil {
					t.Fatal(err)
				}
			}
		}
		checkBooks(t, s)
	}
}

// pick is n, or 0 (unlimited) one time in five.
func pick(rng *rand.Rand, n int) int {
	if rng.IntN(5) == 0 {
		return 0
	}
	return n
}

// fitsQuota reports whether one more VM of f fits every limit of q (the serial model of
// quotaFits).
func fitsQuota(q *ent.Quota, cores int, f *ent.Flavor) bool {
	ok := func(limit, used, n int64) bool { return limit == 0 || used+n <= limit }
	percentOK := q.CPUPercent == 0 || cores == 0 || float64(q.UsedVcpus+f.Vcpus)*100 <= q.CPUPercent*float64(cores)
	return ok(int64(q.Vcpus), int64(q.UsedVcpus), int64(f.Vcpus)) && percentOK &&
		ok(q.MemoryMB, q.UsedMemoryMB, f.MemoryMB) && ok(q.StorageGB, q.UsedStorageGB, f.DiskGB)
}

// TestUpdateQuotaKeepsItsOwner: updateQuota changes limits, never the tenant or host group
// whose usage the quota holds.
func TestUpdateQuotaKeepsItsOwner(t *testing.T) {
	db := openPostgres(t)
	ctx, c := placementtest.Ctx(), db.Client
	s := build(t, c, placementtest.Spec{Racks: 1, HostsPerRack: 1, CPU: 8, MemoryMB: 8192, DiskGB: 100, Cores: 4})
	q, err := s.Quota(ctx, s.Tenant, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	other := c.Tenant.Create().SetName(s.Prefix + "-other").SaveX(ctx)
	_, err = UpdateQuota(ctx, c, q.ID, ent.UpdateQuotaInput{TenantID: &other.ID})
	if e := expectCode(t, err, apierr.CodeValidation); e.Field != "tenantID" {
		t.Errorf("field %q; want tenantID", e.Field)
	}
	got, err := UpdateQuota(ctx, c, q.ID, ent.UpdateQuotaInput{TenantID: &s.Tenant, Vcpus: new(6)})
	if err != nil || got.Vcpus != 6 {
		t.Fatalf("update of the limit with the same tenant: %v, %+v", err, got)
	}
}
