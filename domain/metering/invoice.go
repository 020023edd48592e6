package metering

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/invoice"
	"github.com/virtflow/virtflow/ent/reservationinterval"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
)

// InvoiceStatus is DRAFT while an invoice may still change, FINAL once it never will.
type InvoiceStatus string

// Invoice statuses.
const (
	StatusDraft InvoiceStatus = "DRAFT"
	StatusFinal InvoiceStatus = "FINAL"
)

// DefaultGrace is how long after a month closes its invoices stay DRAFT, so that events
// reported late (an agent back from a partition, a node monitor's verdict) still land in
// the month they belong to.
const DefaultGrace = 72 * time.Hour

// Invoice is a tenant's bill for one calendar month (UTC).
type Invoice struct {
	TenantID    int
	PeriodStart time.Time
	Status      InvoiceStatus
	Lines       []Line
	Adjustments []fieldtype.InvoiceAdjustment
	TotalMicro  int64
	Currency    string
}

// Period is the invoice's month, YYYY-MM.
func (i *Invoice) Period() string { return i.PeriodStart.Format("2006-01") }

// monthOf is the first instant of t's month (UTC).
func monthOf(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// Invoices are the tenant's invoices, newest first, as the viewer in ctx may read them:
// the stored FINAL ones and a DRAFT for each month since the last final one that has usage
// or adjustments, computed now (the running month, and a closed month in its grace period).
func Invoices(ctx context.Context, c *ent.Client, tenantID int, now time.Time) ([]*Invoice, error) {
	finals, err := c.Invoice.Query().Where(invoice.TenantID(tenantID)).Order(ent.Desc(invoice.FieldPeriodStart)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("read invoices of tenant %d: %w", tenantID, err)
	}
	prices, err := LoadPrices(ctx, c)
	if err != nil {
		return nil, err
	}
	first, err := firstMonth(ctx, c, tenantID, finals)
	if err != nil || first.IsZero() {
		return storedInvoices(finals), err
	}
	var drafts []*Invoice
	for m := first; !m.After(monthOf(now)); m = m.AddDate(0, 1, 0) {
		inv, err := draft(ctx, c, prices, tenantID, m, now, finals)
		if err != nil {
			return nil, err
		}
		if len(inv.Lines) > 0 || len(inv.Adjustments) > 0 {
			drafts = append(drafts, inv)
		}
	}
	slices.Reverse(drafts)
	return append(drafts, storedInvoices(finals)...), nil
}

// firstMonth is the first month not yet final for which the tenant may owe something: the
// month after its latest final invoice, or its first interval's month; zero when it never
// reserved anything.
func firstMonth(ctx context.Context, c *ent.Client, tenantID int, finals []*ent.Invoice) (time.Time, error) {
	if len(finals) > 0 {
		return finals[0].PeriodStart.UTC().AddDate(0, 1, 0), nil
	}
	iv, err := c.ReservationInterval.Query().Where(reservationinterval.TenantID(tenantID)).
		Order(ent.Asc(reservationinterval.FieldStartedAt)).First(ctx)
	if ent.IsNotFound(err) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("first interval of tenant %d: %w", tenantID, err)
	}
	return monthOf(iv.StartedAt), nil
}

func storedInvoices(finals []*ent.Invoice) []*Invoice {
	out := make([]*Invoice, len(finals))
	for i, f := range finals {
		inv := &Invoice{TenantID: f.TenantID, PeriodStart: f.PeriodStart.UTC(), Status: StatusFinal,
			Adjustments: f.Adjustments, TotalMicro: f.TotalMicro, Currency: f.Currency}
		for _, l := range f.Lines {
			inv.Lines = append(inv.Lines, Line{Key: l.Key, Resource: l.ResourceID, Kind: Kind(l.Kind),
				Seconds: l.Seconds, UnitSeconds: l.UnitSeconds, AmountMicro: l.AmountMicro, Currency: f.Currency})
		}
		out[i] = inv
	}
	return out
}

// draft computes the tenant's invoice for month m as of now: its usage by resource, and an
// adjustment for every earlier final month whose rating today differs from what was billed
// for it (the final invoice's lines and the adjustments of the final invoices after it).
func draft(ctx context.Context, c *ent.Client, prices *Prices, tenantID int, m, now time.Time, finals []*ent.Invoice) (*Invoice, error) {
	end := m.AddDate(0, 1, 0)
	until := end
	if now.Before(end) {
		until = now
	}
	rows, err := Rows(ctx, c, tenantID, m, end)
	if err != nil {
		return nil, err
	}
	rep := Rate(prices, rows, m.Unix(), end.Unix(), At(until).Unix(), []GroupBy{GroupResource})
	inv := &Invoice{TenantID: tenantID, PeriodStart: m, Status: StatusDraft, Lines: rep.Lines,
		TotalMicro: rep.TotalMicro, Currency: prices.Currency()}
	for _, f := range finals {
		if !f.PeriodStart.Before(m) {
			continue
		}
		billed := int64(0)
		for _, l := range f.Lines {
			billed += l.AmountMicro
		}
		for _, later := range finals {
			if later.PeriodStart.After(f.PeriodStart) && later.PeriodStart.Before(m) {
				for _, a := range later.Adjustments {
					if a.Period == f.PeriodStart.UTC().Format("2006-01") {
						billed += a.AmountMicro
					}
				}
			}
		}
		fEnd := f.PeriodStart.UTC().AddDate(0, 1, 0)
		rows, err := Rows(ctx, c, tenantID, f.PeriodStart, fEnd)
		if err != nil {
			return nil, err
		}
		// Grouped as the invoice's lines were, so that rounding alone never adjusts.
		rerated := Rate(prices, rows, f.PeriodStart.Unix(), fEnd.Unix(), fEnd.Unix(), []GroupBy{GroupResource}).TotalMicro
		if d := rerated - billed; d != 0 {
			inv.Adjustments = append(inv.Adjustments, fieldtype.InvoiceAdjustment{
				Period: f.PeriodStart.UTC().Format("2006-01"), AmountMicro: d,
				Reason: "the ledger or the price list changed after the invoice was final"})
			inv.TotalMicro += d
		}
	}
	slices.SortFunc(inv.Adjustments, func(a, b fieldtype.InvoiceAdjustment) int {
		if a.Period < b.Period {
			return -1
		}
		if a.Period > b.Period {
			return 1
		}
		return 0
	})
	return inv, nil
}

// Finalize writes the FINAL invoice of every tenant for every month that closed at least
// grace before now and has none yet, from the tenant's first reserved month on.
// It runs as the system and is idempotent: the unique (tenant, month) index makes a second
// writer fail rather than bill twice. It returns how many invoices it wrote.
func Finalize(ctx context.Context, c *ent.Client, now time.Time, grace time.Duration) (int, error) {
	sys := authz.SystemContext(ctx, "metering")
	tenants, err := c.ReservationInterval.Query().GroupBy(reservationinterval.FieldTenantID).Ints(sys)
	if err != nil {
		return 0, fmt.Errorf("tenants with usage: %w", err)
	}
	slices.Sort(tenants)
	written := 0
	for _, t := range tenants {
		n, err := finalizeTenant(sys, c, t, now, grace)
		written += n
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

func finalizeTenant(ctx context.Context, c *ent.Client, tenantID int, now time.Time, grace time.Duration) (int, error) {
	written := 0
	for {
		finals, err := c.Invoice.Query().Where(invoice.TenantID(tenantID)).Order(ent.Desc(invoice.FieldPeriodStart)).All(ctx)
		if err != nil {
			return written, fmt.Errorf("read invoices of tenant %d: %w", tenantID, err)
		}
		m, err := firstMonth(ctx, c, tenantID, finals)
		if err != nil || m.IsZero() || m.AddDate(0, 1, 0).Add(grace).After(now) {
			return written, err
		}
		prices, err := LoadPrices(ctx, c)
		if err != nil {
			return written, err
		}
		inv, err := draft(ctx, c, prices, tenantID, m, now, finals)
		if err != nil {
			return written, err
		}
		lines := make([]fieldtype.InvoiceLine, len(inv.Lines))
		for i, l := range inv.Lines {
			lines[i] = fieldtype.InvoiceLine{Key: l.Key, ResourceID: l.Resource, Kind: string(l.Kind),
				Seconds: l.Seconds, UnitSeconds: l.UnitSeconds, AmountMicro: l.AmountMicro}
		}
		// A month without usage still gets its (empty) final invoice: it is what later
		// months' adjustments and firstMonth count from.
		err = c.Invoice.Create().SetTenantID(tenantID).SetPeriodStart(m).SetCurrency(inv.Currency).
			SetLines(lines).SetAdjustments(inv.Adjustments).SetTotalMicro(inv.TotalMicro).Exec(ctx)
		if err != nil {
			return written, fmt.Errorf("finalize invoice %s of tenant %d: %w", m.Format("2006-01"), tenantID, err)
		}
		written++
	}
}

// FinalizeLoop finalizes invoices every interval until ctx ends (in the worker: a periodic
// task, since a month closes whether or not anyone asks for its invoice).
func FinalizeLoop(ctx context.Context, c *ent.Client, clock func() time.Time, grace, interval time.Duration, log interface {
	Warn(string, ...any)
	Info(string, ...any)
}) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if n, err := Finalize(ctx, c, clock(), grace); err != nil {
			log.Warn("invoice finalization failed", "err", err)
		} else if n > 0 {
			log.Info("invoices finalized", "invoices", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
