package placement

import (
	"testing"
	"time"

	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/reservationinterval"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// TestReservationPathsWriteTheLedger: the placer's create, resize, move and delete each
// record the change in the reservation ledger at the placer's clock, in their own
// transaction: one interval per state, contiguous, the last closed at the delete.
func TestReservationPathsWriteTheLedger(t *testing.T) {
	db := openPostgres(t)
	ctx, c := placementtest.Ctx(), db.Client
	s := build(t, c, placementtest.Spec{Racks: 2, HostsPerRack: 1, CPU: 16, MemoryMB: 16384, DiskGB: 100, Cores: 8, Providers: true})
	f2, _ := s.Flavor(ctx, 2, 1024, 10, false)
	f4, _ := s.Flavor(ctx, 4, 2048, 10, false)
	now := time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)
	p := New(Config{Clock: func() time.Time { return now }})
	vm, err := p.CreateVM(ctx, c, vmInput(s, f2, "billed"))
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)
	c.VirtualMachine.UpdateOneID(vm.ID).SetStatus(virtualmachine.StatusStopped).ExecX(ctx)
	if _, err := p.Resize(ctx, c, vm.ID, f4.ID); err != nil {
		t.Fatal(err)
	}
	now = now.Add(30 * time.Minute)
	home := c.VirtualMachine.QueryNode(vm).OnlyIDX(ctx)
	c.ComputeNode.UpdateOneID(home).SetSchedulable(false).ExecX(ctx)
	if _, err := p.Move(ctx, c, vm.ID); err != nil {
		t.Fatal(err)
	}
	now = now.Add(15 * time.Second)
	if err := p.DeleteVM(ctx, c, vm.ID); err != nil {
		t.Fatal(err)
	}
	ivs := c.ReservationInterval.Query().Where(reservationinterval.ResourceID(vm.ID)).
		Order(ent.Asc(reservationinterval.FieldStartedAt), ent.Asc(reservationinterval.FieldID)).AllX(ctx)
	start := time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)
	want := []struct {
		from, to time.Duration
		flavor   string
	}{{0, time.Hour, f2.Name}, {time.Hour, 90 * time.Minute, f4.Name}, {90 * time.Minute, 90*time.Minute + 15*time.Second, f4.Name}}
	if len(ivs) != len(want) {
		t.Fatalf("%d intervals, want %d: %v", len(ivs), len(want), ivs)
	}
	for i, w := range want {
		iv := ivs[i]
		if !iv.StartedAt.Equal(start.Add(w.from)) || iv.EndedAt == nil || !iv.EndedAt.Equal(start.Add(w.to)) || iv.Flavor != w.flavor || iv.TenantID != s.Tenant {
			t.Errorf("interval %d: %v–%v %s, want %v–%v %s", i, iv.StartedAt, iv.EndedAt, iv.Flavor, start.Add(w.from), start.Add(w.to), w.flavor)
		}
	}
}
