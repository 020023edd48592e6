package placement

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
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

// createIn places a VM named name through p in a transaction of the caller's (as a GraphQL
// mutation does: placement joins the transaction in ctx), then calls tail before the
// commit, as the mutation's remaining writes do. It returns the error of the placement or
// of the commit.
func (p *process) createIn(s *placementtest.Site, f *ent.Flavor, name string, tail func()) error {
	ctx := placementtest.Ctx()
	tx, err := p.db.Client.Tx(ctx)
	if err != nil {
		return err
	}
	ctx = ent.NewTxContext(ctx, tx)
	if _, err := p.placer.CreateVM(ctx, tx.Client(),
		ent.CreateVirtualMachineInput{Name: name, TenantID: s.Tenant, RegionID: s.Region, FlavorID: f.ID}); err != nil {
		_ = tx.Rollback()
		return err
	}
	tail()
	return tx.Commit()
}

// tenantQuota reads the tenant's quota row of s.
func tenantQuota(tb testing.TB, c *ent.Client, s *placementtest.Site) *ent.Quota {
	tb.Helper()
	q, err := c.Quota.Query().Where(quota.HasTenantWith(tenantpkg.ID(s.Tenant))).Only(placementtest.Ctx())
	if err != nil {
		tb.Fatal(err)
	}
	return q
}

// TestQuotaChargedAtCommitRace: the quota is charged by a conditional UPDATE just before
// COMMIT. 80 creates race through two processes with warm caches, each in a transaction
// that goes on writing for a while after its placement (the mutation's tail), for a quota
// with room for exactly 10. Exactly 10 commit and 70 are refused with QUOTA_EXCEEDED (at
// placement or at commit), no refused create leaves a VM, and a reader sampling the quota
// row throughout never sees it past its limit. Afterwards both caches refuse the next
// create, and the books balance.
func TestQuotaChargedAtCommitRace(t *testing.T) {
	ch := channel(t)
	ps := []*process{newProcess(t, testdb.RedisURL(), ch, Config{}), newProcess(t, testdb.RedisURL(), ch, Config{})}
	ctx := placementtest.Ctx()
	c := ps[0].db.Client
	s := build(t, c, placementtest.Spec{Racks: 4, HostsPerRack: 2, CPU: 64, MemoryMB: 65536, DiskGB: 1000, Cores: 32})
	f, err := s.Flavor(ctx, 2, 1024, 10, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Quota(ctx, s.Tenant, 24, 0); err != nil {
		t.Fatal(err)
	}
	for i, p := range ps { // warm both caches: 4 of the 24 vCPUs
		if _, err := p.createVM(s, f, fmt.Sprintf("%s-warm-%d", s.Prefix, i)); err != nil {
			t.Fatal(err)
		}
	}

	stop := make(chan struct{})
	var samples, over atomic.Int64
	var sampler sync.WaitGroup
	sampler.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			q := tenantQuota(t, c, s)
			samples.Add(1)
			if q.UsedVcpus > q.Vcpus {
				over.Add(1)
			}
		}
	})
	const n = 80
	out := map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			err := ps[i%2].createIn(s, f, fmt.Sprintf("%s-race-%d", s.Prefix, i), func() {
				time.Sleep(time.Duration(i%5) * time.Millisecond)
			})
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
	close(stop)
	sampler.Wait()

	if out[""] != 10 || out[string(apierr.CodeQuotaExceeded)] != n-10 {
		t.Errorf("outcomes %v; want 10 placed and %d QUOTA_EXCEEDED", out, n-10)
	}
	if over.Load() > 0 {
		t.Errorf("%d of %d samples saw the quota's usage past its limit", over.Load(), samples.Load())
	}
	if vms := vmsOf(t, c, s.Tenant); vms != 12 {
		t.Errorf("the tenant has %d VMs; want 12 (2 warm, 10 placed)", vms)
	}
	if q := tenantQuota(t, c, s); q.UsedVcpus != 24 {
		t.Errorf("quota uses %d vCPUs; want 24", q.UsedVcpus)
	}
	for i, p := range ps {
		_, err := p.createVM(s, f, fmt.Sprintf("%s-after-%d", s.Prefix, i))
		expectCode(t, err, apierr.CodeQuotaExceeded)
	}
	checkBooks(t, s)
}

// TestQuotaRowFreeUntilCommit: a create that placed but has not committed yet does not hold
// its tenant's quota row, so the row can be written meanwhile (here its limit is lowered
// to what is committed, as a concurrent create taking the last room would do). The create
// is then refused at its commit with QUOTA_EXCEEDED, and nothing of it stays: no VM, no
// node allocation, no quota usage. The caches of both processes follow.
func TestQuotaRowFreeUntilCommit(t *testing.T) {
	ch := channel(t)
	ps := []*process{newProcess(t, testdb.RedisURL(), ch, Config{}), newProcess(t, testdb.RedisURL(), ch, Config{})}
	ctx := placementtest.Ctx()
	c := ps[0].db.Client
	s := build(t, c, placementtest.Spec{Racks: 2, HostsPerRack: 2, CPU: 64, MemoryMB: 65536, DiskGB: 1000, Cores: 32})
	f, err := s.Flavor(ctx, 2, 1024, 10, false)
	if err != nil {
		t.Fatal(err)
	}
	q, err := s.Quota(ctx, s.Tenant, 6, 0) // room for 3
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range ps { // warm both caches: 4 of the 6 vCPUs
		if _, err := p.createVM(s, f, fmt.Sprintf("%s-warm-%d", s.Prefix, i)); err != nil {
			t.Fatal(err)
		}
	}

	first := ps[0].createIn(s, f, s.Prefix+"-first", func() {
		// Placed, not committed. Bounded, so that a row the create holds fails here
		// instead of hanging.
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if _, err := UpdateQuota(ctx, c, q.ID, ent.UpdateQuotaInput{Vcpus: new(4)}); err != nil {
			t.Errorf("update the quota row while a create of its tenant had placed and not committed: %v", err)
		}
	})
	e := expectCode(t, first, apierr.CodeQuotaExceeded)
	if e.Extra["reasons"] == nil {
		t.Errorf("refusal at commit without reasons: %+v", e)
	}
	if n := c.VirtualMachine.Query().Where(virtualmachine.Name(s.Prefix + "-first")).CountX(ctx); n != 0 {
		t.Errorf("the refused create left %d VM rows", n)
	}
	if got := tenantQuota(t, c, s); got.UsedVcpus != 4 {
		t.Errorf("quota uses %d vCPUs; want 4", got.UsedVcpus)
	}
	checkBooks(t, s)
	// Room for one more: placed through the process whose decision was refused (its cache
	// reads the quota again), then refused through the other.
	if _, err := UpdateQuota(ctx, c, q.ID, ent.UpdateQuotaInput{Vcpus: new(6)}); err != nil {
		t.Fatal(err)
	}
	if _, err := ps[0].createVM(s, f, s.Prefix+"-third"); err != nil {
		t.Fatal(err)
	}
	_, err = ps[1].createVM(s, f, s.Prefix+"-fourth")
	expectCode(t, err, apierr.CodeQuotaExceeded)
	checkBooks(t, s)
}

// TestQuotaChargesOfOneTransaction: two creates in one transaction (two fields of one
// mutation) for a quota with room for one: the second sees the first's charge and is
// refused at placement, as it was when quotas were charged at once; with room for two
// both commit and the quota counts both.
func TestQuotaChargesOfOneTransaction(t *testing.T) {
	ch := channel(t)
	p := newProcess(t, testdb.RedisURL(), ch, Config{})
	ctx := placementtest.Ctx()
	c := p.db.Client
	s := build(t, c, placementtest.Spec{Racks: 2, HostsPerRack: 2, CPU: 64, MemoryMB: 65536, DiskGB: 1000, Cores: 32})
	f, err := s.Flavor(ctx, 2, 1024, 10, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Quota(ctx, s.Tenant, 2, 0); err != nil {
		t.Fatal(err)
	}
	two := func(name string) (error, error) {
		tx, err := c.Tx(ctx)
		if err != nil {
			t.Fatal(err)
		}
		tctx := ent.NewTxContext(ctx, tx)
		var errs [2]error
		for i := range errs {
			_, errs[i] = p.placer.CreateVM(tctx, tx.Client(), ent.CreateVirtualMachineInput{
				Name: fmt.Sprintf("%s-%s-%d", s.Prefix, name, i), TenantID: s.Tenant, RegionID: s.Region, FlavorID: f.ID})
			if errs[i] != nil {
				_ = tx.Rollback()
				return errs[0], errs[1]
			}
		}
		return errs[0], tx.Commit()
	}
	first, second := two("one-room")
	if first != nil {
		t.Fatal(first)
	}
	expectCode(t, second, apierr.CodeQuotaExceeded)
	if got := tenantQuota(t, c, s); got.UsedVcpus != 0 {
		t.Errorf("quota uses %d vCPUs after the rolled-back pair; want 0", got.UsedVcpus)
	}
	if _, err := SetQuota(ctx, c, QuotaInput{TenantID: s.Tenant, HostGroupID: s.HostGroup, VCPUs: new(4)}); err != nil {
		t.Fatal(err)
	}
	if first, second := two("two-rooms"); first != nil || second != nil {
		t.Fatalf("with room for two: %v, %v", first, second)
	}
	if got := tenantQuota(t, c, s); got.UsedVcpus != 4 {
		t.Errorf("quota uses %d vCPUs; want 4", got.UsedVcpus)
	}
	checkBooks(t, s)
}
