package metering_test

import (
	"context"
	"testing"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/metering"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/invoice"
)

// billingSite is a site with one flavor priced 1.000000 EUR an hour (named in the result)
// and volumes priced 0.000100 EUR per GiB-hour, from 2025 on.
func billingSite(t *testing.T, c *ent.Client) (*placementtest.Site, *ent.Flavor) {
	t.Helper()
	ctx := placementtest.Ctx()
	site, err := placementtest.Build(ctx, c, placementtest.Spec{Racks: 1, HostsPerRack: 1, CPU: 64, MemoryMB: 1 << 20, DiskGB: 1 << 12, Cores: 32})
	if err != nil {
		t.Fatal(err)
	}
	f, err := site.Flavor(ctx, 2, 4096, 10, false)
	if err != nil {
		t.Fatal(err)
	}
	since := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, e := range []metering.PriceEntry{
		{Kind: metering.PriceFlavor, Key: f.Name, AmountMicro: 1_000_000, EffectiveFrom: since},
		{Kind: metering.PriceVolumeGB, Key: "SSD", AmountMicro: 100, EffectiveFrom: since},
	} {
		if _, err := metering.AddPrice(ctx, c, e); err != nil && !ent.IsConstraintError(err) {
			t.Fatal(err)
		}
	}
	return site, f
}

// vmFor creates a VM row of the site's tenant placed on its first node and opens its
// ledger interval at start, closing it at end unless end is zero.
func vmFor(t *testing.T, c *ent.Client, site *placementtest.Site, tenant int, f *ent.Flavor, name string, start, end time.Time) *ent.VirtualMachine {
	t.Helper()
	ctx := placementtest.Ctx()
	vm, err := c.VirtualMachine.Create().SetName(name).SetTenantID(tenant).SetRegionID(site.Region).SetFlavorID(f.ID).
		SetNodeID(site.Nodes[0].ID).SetClusterID(site.Cluster).SetAllocatedVcpus(f.Vcpus).SetAllocatedMemoryMB(f.MemoryMB).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := metering.OpenVMs(ctx, c, start, vm.ID); err != nil {
		t.Fatal(err)
	}
	if !end.IsZero() {
		if err := metering.Close(ctx, c, end, metering.KindVM, vm.ID); err != nil {
			t.Fatal(err)
		}
	}
	return vm
}

// TestFinalInvoiceImmutableLateEventAdjusts: March's invoice is DRAFT until the grace
// period after March passed, then FINAL with what the ledger said (240 h at 1 EUR); it
// can be neither updated nor deleted. A price correction dated into March and a volume
// reported late for March do not touch it: they become an adjustment on April's invoice,
// once, and May's invoice repeats nothing.
func TestFinalInvoiceImmutableLateEventAdjusts(t *testing.T) {
	c := openPostgres(t)
	ctx := placementtest.Ctx()
	site, f := billingSite(t, c)
	day := func(m time.Month, d int) time.Time { return time.Date(2026, m, d, 0, 0, 0, 0, time.UTC) }
	vmFor(t, c, site, site.Tenant, f, "march", day(3, 10), day(3, 20))

	invs, err := metering.Invoices(ctx, c, site.Tenant, day(4, 2))
	if err != nil {
		t.Fatal(err)
	}
	if len(invs) != 1 || invs[0].Status != metering.StatusDraft || invs[0].Period() != "2026-03" || invs[0].TotalMicro != 240_000_000 {
		t.Fatalf("in March's grace period: %+v, want one DRAFT 2026-03 of 240.000000", invs)
	}
	if n, err := metering.Finalize(ctx, c, day(4, 2), metering.DefaultGrace); err != nil || n != 0 {
		t.Fatalf("Finalize within the grace period wrote %d invoices (%v), want none", n, err)
	}
	if n, err := metering.Finalize(ctx, c, day(4, 5), metering.DefaultGrace); err != nil || n != 1 {
		t.Fatalf("Finalize after the grace period wrote %d invoices (%v), want March's", n, err)
	}
	march, err := c.Invoice.Query().Where(invoice.TenantID(site.Tenant)).Only(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if march.TotalMicro != 240_000_000 || len(march.Lines) != 1 || march.Lines[0].Seconds != 240*3600 {
		t.Fatalf("March's final invoice: %+v", march)
	}
	if err := c.Invoice.UpdateOneID(march.ID).SetUpdatedAt(time.Now()).Exec(ctx); codeOf(err) != apierr.CodeConflict {
		t.Errorf("updating a final invoice: %v, want CONFLICT", err)
	}
	if err := c.Invoice.DeleteOneID(march.ID).Exec(ctx); codeOf(err) != apierr.CodeConflict {
		t.Errorf("deleting a final invoice: %v, want CONFLICT", err)
	}

	// Late: the flavor cost 2 EUR from March 15 on (a correction), and a 10 GiB volume was
	// reserved on March 25 for a day (reported late).
	if _, err := metering.AddPrice(ctx, c, metering.PriceEntry{Kind: metering.PriceFlavor, Key: f.Name,
		AmountMicro: 2_000_000, EffectiveFrom: day(3, 15)}); err != nil {
		t.Fatal(err)
	}
	if err := metering.Open(ctx, c, day(3, 25), metering.Interval{Kind: metering.KindVolume, ResourceID: 1 << 30,
		Name: "late", TenantID: site.Tenant, IOClass: "SSD", Quantity: 10}); err != nil {
		t.Fatal(err)
	}
	if err := metering.Close(ctx, c, day(3, 26), metering.KindVolume, 1<<30); err != nil {
		t.Fatal(err)
	}
	// 5 days at 2 EUR instead of 1: +120; 24 h × 10 GiB × 0.0001: +0.024.
	const adjustment = 120_024_000
	invs, err = metering.Invoices(ctx, c, site.Tenant, day(4, 10))
	if err != nil {
		t.Fatal(err)
	}
	if len(invs) != 2 || invs[0].Period() != "2026-04" || invs[0].Status != metering.StatusDraft ||
		len(invs[0].Adjustments) != 1 || invs[0].Adjustments[0].Period != "2026-03" || invs[0].Adjustments[0].AmountMicro != adjustment {
		t.Fatalf("after the late events: %+v, want April's DRAFT with a +120.024000 adjustment for March", invs)
	}
	if invs[1].Status != metering.StatusFinal || invs[1].TotalMicro != 240_000_000 {
		t.Fatalf("March changed: %+v", invs[1])
	}
	if n, err := metering.Finalize(ctx, c, day(5, 5), metering.DefaultGrace); err != nil || n != 1 {
		t.Fatalf("Finalize in May wrote %d (%v), want April's", n, err)
	}
	invs, err = metering.Invoices(ctx, c, site.Tenant, day(5, 20))
	if err != nil {
		t.Fatal(err)
	}
	if len(invs) != 2 || invs[0].Period() != "2026-04" || invs[0].Status != metering.StatusFinal || invs[0].TotalMicro != adjustment {
		t.Fatalf("in May: %+v, want April FINAL with the adjustment only and no May invoice", invs)
	}
}

// TestUsageTenantIsolation: a tenant's admin reads its own usage and invoices, never another
// tenant's — refused (FORBIDDEN) and, below that, filtered out by the database's policy; a
// tenant member reads neither; an operator reads both.
func TestUsageTenantIsolation(t *testing.T) {
	c := openPostgres(t)
	ctx := placementtest.Ctx()
	site, f := billingSite(t, c)
	other, err := c.Tenant.Create().SetName(site.Prefix + "-other").Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	from, to := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	vmFor(t, c, site, site.Tenant, f, "mine", from.Add(time.Hour), from.Add(3*time.Hour))
	vmFor(t, c, site, other.ID, f, "theirs", from.Add(time.Hour), from.Add(5*time.Hour))

	as := func(role authz.Role, tenant int) context.Context {
		return authz.NewContext(context.Background(), &authz.Viewer{UserID: 1, Name: "u",
			Bindings: []authz.Binding{{Role: role, Domain: authz.TenantDomain(tenant)}}})
	}
	admin := as(authz.RoleTenantAdmin, site.Tenant)
	if err := metering.Authorize(admin, site.Tenant); err != nil {
		t.Fatalf("a tenant admin reading its own usage: %v", err)
	}
	mine, err := metering.Usage(admin, c, site.Tenant, from, to, to, nil)
	if err != nil || mine.TotalMicro != 2_000_000 {
		t.Fatalf("own usage: %+v, %v; want 2.000000", mine, err)
	}
	if err := metering.Authorize(admin, other.ID); codeOf(err) != apierr.CodeForbidden {
		t.Errorf("a tenant admin reading another tenant's usage: %v, want FORBIDDEN", err)
	}
	// Even past the check, the database policy hides the other tenant's rows.
	theirs, err := metering.Usage(admin, c, other.ID, from, to, to, nil)
	if err != nil || len(theirs.Lines) != 0 || theirs.TotalMicro != 0 {
		t.Errorf("another tenant's usage read past the check: %+v, %v; want nothing", theirs, err)
	}
	if invs, err := metering.Invoices(admin, c, other.ID, to); err != nil || len(invs) != 0 {
		t.Errorf("another tenant's invoices read past the check: %+v, %v; want none", invs, err)
	}
	if err := metering.Authorize(as(authz.RoleTenantMember, site.Tenant), site.Tenant); codeOf(err) != apierr.CodeForbidden {
		t.Errorf("a tenant member reading its tenant's usage: %v, want FORBIDDEN", err)
	}
	op := authz.NewContext(context.Background(), &authz.Viewer{UserID: 2, Name: "op",
		Bindings: []authz.Binding{{Role: authz.RoleOperator, Domain: authz.Platform}}})
	for _, tn := range []int{site.Tenant, other.ID} {
		if err := metering.Authorize(op, tn); err != nil {
			t.Errorf("an operator reading tenant %d's usage: %v", tn, err)
		}
	}
	if u, err := metering.Usage(op, c, other.ID, from, to, to, nil); err != nil || u.TotalMicro != 4_000_000 {
		t.Errorf("an operator reading the other tenant: %+v, %v; want 4.000000", u, err)
	}
}
