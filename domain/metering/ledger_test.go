package metering_test

import (
	"sync"
	"testing"
	"time"

	"github.com/virtflow/virtflow/domain/metering"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent/reservationinterval"
)

// TestLedgerSQLite: the ledger's statements run on the embedded SQLite database too (its
// numbered parameters, the INSERT … SELECT, the close), and usage reads them back.
func TestLedgerSQLite(t *testing.T) {
	c := openSQLite(t)
	site, f := billingSite(t, c)
	start := time.Date(2026, 2, 1, 8, 0, 0, 0, time.UTC)
	vm := vmFor(t, c, site, site.Tenant, f, "lite", start, time.Time{})
	ctx := placementtest.Ctx()
	if err := metering.ReopenVMs(ctx, c, start.Add(90*time.Minute), vm.ID); err != nil {
		t.Fatal(err)
	}
	if err := metering.Close(ctx, c, start.Add(3*time.Hour), metering.KindVM, vm.ID); err != nil {
		t.Fatal(err)
	}
	u, err := metering.Usage(ctx, c, site.Tenant, start.Add(-time.Hour), start.Add(24*time.Hour), start.Add(24*time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Lines) != 1 || u.Lines[0].Seconds != 3*3600 || u.TotalMicro != 3_000_000 {
		t.Fatalf("usage %+v, want 10,800 s and 3.000000", u)
	}
}

// TestOneOpenInterval: two transactions opening the same VM's interval at once (a
// double-submitted create) cannot both commit: the database keeps one open interval per
// resource.
func TestOneOpenInterval(t *testing.T) {
	c := openPostgres(t)
	site, f := billingSite(t, c)
	ctx := placementtest.Ctx()
	start := time.Date(2026, 2, 1, 8, 0, 0, 0, time.UTC)
	vm := vmFor(t, c, site, site.Tenant, f, "twice", start, start.Add(time.Hour))
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = func() error {
				tx, err := c.Tx(ctx)
				if err != nil {
					return err
				}
				if err := metering.OpenVMs(ctx, tx.Client(), start.Add(2*time.Hour), vm.ID); err != nil {
					_ = tx.Rollback()
					return err
				}
				return tx.Commit()
			}()
		}()
	}
	wg.Wait()
	if (errs[0] == nil) == (errs[1] == nil) {
		t.Fatalf("concurrent opens: %v, %v; want exactly one to fail", errs[0], errs[1])
	}
	n, err := c.ReservationInterval.Query().Where(reservationinterval.ResourceID(vm.ID), reservationinterval.EndedAtIsNil()).Count(ctx)
	if err != nil || n != 1 {
		t.Fatalf("%d open intervals (%v), want 1", n, err)
	}
	// An interval cannot end before it starts, whoever writes it.
	err = c.ReservationInterval.Create().SetTenantID(site.Tenant).SetKind(reservationinterval.KindVOLUME).SetResourceID(42).
		SetStartedAt(start).SetEndedAt(start.Add(-time.Second)).Exec(ctx)
	if err == nil {
		t.Fatalf("an interval ending before it starts was stored")
	}
}
