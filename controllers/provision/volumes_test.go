package provision_test

import (
	"testing"

	"github.com/virtflow/virtflow/controllers/provision"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/reservationinterval"
	"github.com/virtflow/virtflow/ent/volume"
)

// TestVolumeLifecycle walks a volume through the server's side of its life: created with a VM
// (charged to the VM's node and the tenant's storage quota, an assignment of its own, the
// VM's assignment back to PENDING), ATTACHED only once the agent reports the domain has it,
// refused when the quota is full (nothing written), not deletable while attached, detached
// (AVAILABLE once the domain no longer has it), deleted with its data (DELETING, then gone
// with the charge given back once its agent deleted it). The site's books balance at every
// step (placementtest.Site.Check counts volumes).
func TestVolumeLifecycle(t *testing.T) {
	f := newFixture(t)
	quota, err := f.c.Quota.Create().SetTenantID(f.site.Tenant).SetHostGroupID(f.site.HostGroup).SetStorageGB(100).Save(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	vm := f.create(t, "with-volume")
	f.run(t, provision.TypeVMCreate, vm.ID, 0)
	a := f.assignment(t, vm.ID)
	running := "running"
	f.report(t, provision.Report{ID: a.ID, Generation: 1, Status: assignment.StatusApplied, ObservedState: &running, VolumeIDs: []int{}})
	f.balanced(t)

	v, err := f.svc.CreateVolume(f.ctx, f.c, ent.CreateVolumeInput{Name: "data", SizeGB: 30, TenantID: f.site.Tenant, VirtualMachineID: &vm.ID})
	if err != nil {
		t.Fatalf("CreateVolume: %v", err)
	}
	v = f.volume(t, v.ID)
	if v.Status != volume.StatusAttaching || v.Edges.Node == nil || v.Edges.Node.ID != f.vm(t, vm.ID).QueryNode().OnlyIDX(f.ctx) {
		t.Fatalf("created with a VM: %s on %v; want ATTACHING on the VM's node", v.Status, v.Edges.Node)
	}
	if got := f.assignment(t, vm.ID); got.Status != assignment.StatusPending || got.Generation != 1 {
		t.Fatalf("VM's assignment after attach: %s gen %d; want PENDING at the same generation (no reboot)", got.Status, got.Generation)
	}
	va, err := f.c.Assignment.Query().Where(assignment.HasVolumeWith(volume.ID(v.ID))).Only(f.ctx)
	if err != nil || va.DesiredState != assignment.DesiredStateRunning {
		t.Fatalf("volume's assignment: %v %v", va, err)
	}
	f.balanced(t)

	// The agent created the volume: still ATTACHING until the domain has it.
	present := "present"
	f.report(t, provision.Report{ID: va.ID, Generation: va.Generation, Status: assignment.StatusApplied, ObservedState: &present})
	if got := f.volume(t, v.ID).Status; got != volume.StatusAttaching {
		t.Fatalf("after the volume's own report: %s; want ATTACHING", got)
	}
	// A running domain that could not hot-plug it: still ATTACHING, saying why.
	later := "takes effect at the VM's next start"
	f.report(t, provision.Report{ID: a.ID, Generation: 1, Status: assignment.StatusApplied, ObservedState: &running, Reason: &later, VolumeIDs: []int{}})
	if got := f.volume(t, v.ID); got.Status != volume.StatusAttaching || got.StatusReason != later {
		t.Fatalf("not hot-plugged: %s %q", got.Status, got.StatusReason)
	}
	f.report(t, provision.Report{ID: a.ID, Generation: 1, Status: assignment.StatusApplied, ObservedState: &running, VolumeIDs: []int{v.ID}})
	if got := f.volume(t, v.ID).Status; got != volume.StatusAttached {
		t.Fatalf("after the domain has it: %s; want ATTACHED", got)
	}

	// A second volume over the quota: QUOTA_EXCEEDED on sizeGB, and nothing of it stays.
	tx, err := f.c.Tx(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.CreateVolume(f.ctx, tx.Client(), ent.CreateVolumeInput{Name: "too-big", SizeGB: 71, TenantID: f.site.Tenant, VirtualMachineID: &vm.ID})
	_ = tx.Rollback()
	if e, ok := apierr.As(err); !ok || e.Code != apierr.CodeQuotaExceeded || e.Field != "sizeGB" {
		t.Fatalf("volume over the quota: %v; want QUOTA_EXCEEDED on sizeGB", err)
	}
	f.balanced(t)

	if err := f.svc.DeleteVolume(f.ctx, f.c, v.ID); !isValidation(err, "id") {
		t.Fatalf("deleting an attached volume: %v; want VALIDATION on id", err)
	}
	if _, err := f.svc.DetachVolume(f.ctx, f.c, v.ID); err != nil {
		t.Fatal(err)
	}
	if got := f.volume(t, v.ID); got.Status != volume.StatusDetaching || got.Edges.VirtualMachine == nil {
		t.Fatalf("after detach: %s; want DETACHING, still on the VM", got.Status)
	}
	if got := f.assignment(t, vm.ID); got.Status != assignment.StatusPending || got.Generation != 1 {
		t.Fatalf("VM's assignment after detach: %s gen %d; want PENDING at the same generation", got.Status, got.Generation)
	}
	f.report(t, provision.Report{ID: a.ID, Generation: 1, Status: assignment.StatusApplied, ObservedState: &running, VolumeIDs: []int{}})
	if got := f.volume(t, v.ID); got.Status != volume.StatusAvailable || got.Edges.VirtualMachine != nil {
		t.Fatalf("after the domain let it go: %s, VM %v; want AVAILABLE and no VM", got.Status, got.Edges.VirtualMachine)
	}

	if err := f.svc.DeleteVolume(f.ctx, f.c, v.ID); err != nil {
		t.Fatal(err)
	}
	va, err = f.c.Assignment.Get(f.ctx, va.ID)
	if err != nil || va.DesiredState != assignment.DesiredStateAbsent || f.volume(t, v.ID).Status != volume.StatusDeleting {
		t.Fatalf("after delete: assignment %v (%v), volume %s; want ABSENT and DELETING", va, err, f.volume(t, v.ID).Status)
	}
	absent := "absent"
	f.report(t, provision.Report{ID: va.ID, Generation: va.Generation, Status: assignment.StatusApplied, ObservedState: &absent})
	if ok, _ := f.c.Volume.Query().Where(volume.ID(v.ID)).Exist(f.ctx); ok {
		t.Fatal("the volume is still there after its node deleted it")
	}
	f.balanced(t)
	q := f.c.Quota.GetX(f.ctx, quota.ID)
	if q.UsedStorageGB != f.flav.DiskGB {
		t.Fatalf("quota uses %d GB after the volume went; want the VM's %d", q.UsedStorageGB, f.flav.DiskGB)
	}
	// The reservation ledger: the volume was reserved from its charge to its deletion, once;
	// the volume over the quota (rolled back) left nothing.
	ivs := f.c.ReservationInterval.Query().Where(reservationinterval.TenantID(f.site.Tenant),
		reservationinterval.KindEQ(reservationinterval.KindVOLUME)).AllX(f.ctx)
	if len(ivs) != 1 || ivs[0].ResourceID != v.ID || ivs[0].EndedAt == nil || ivs[0].Quantity != 30 || ivs[0].IoClass != "SSD" {
		t.Fatalf("volume intervals %v; want one of volume %d, 30 GiB SSD, closed", ivs, v.ID)
	}
}

// TestVolumeOutlivesItsVM: deleting a VM detaches its volumes and keeps their data
// (AVAILABLE); a PENDING volume (never attached) is deleted at once.
func TestVolumeOutlivesItsVM(t *testing.T) {
	f := newFixture(t)
	vm := f.create(t, "short-lived")
	f.run(t, provision.TypeVMCreate, vm.ID, 0)
	a := f.assignment(t, vm.ID)
	v, err := f.svc.CreateVolume(f.ctx, f.c, ent.CreateVolumeInput{Name: "keep", SizeGB: 5, TenantID: f.site.Tenant, VirtualMachineID: &vm.ID})
	if err != nil {
		t.Fatal(err)
	}
	va, _ := f.c.Assignment.Query().Where(assignment.HasVolumeWith(volume.ID(v.ID))).Only(f.ctx)
	present, running, absent := "present", "running", "absent"
	f.report(t, provision.Report{ID: va.ID, Generation: 1, Status: assignment.StatusApplied, ObservedState: &present})
	f.report(t, provision.Report{ID: a.ID, Generation: 1, Status: assignment.StatusApplied, ObservedState: &running, VolumeIDs: []int{v.ID}})

	if err := f.svc.DeleteVM(f.ctx, f.c, vm.ID, false); err != nil {
		t.Fatal(err)
	}
	f.run(t, provision.TypeVMDelete, vm.ID, 1)
	a = f.assignment(t, vm.ID)
	f.report(t, provision.Report{ID: a.ID, Generation: a.Generation, Status: assignment.StatusApplied, ObservedState: &absent})
	if got := f.volume(t, v.ID); got.Status != volume.StatusAvailable || got.Edges.VirtualMachine != nil || got.Edges.Node == nil {
		t.Fatalf("volume after its VM was deleted: %s, VM %v, node %v; want AVAILABLE on its node", got.Status, got.Edges.VirtualMachine, got.Edges.Node)
	}
	f.balanced(t)

	p, err := f.svc.CreateVolume(f.ctx, f.c, ent.CreateVolumeInput{Name: "never-used", SizeGB: 1, TenantID: f.site.Tenant})
	if err != nil || p.Status != volume.StatusPending {
		t.Fatalf("volume without VM: %v %v; want PENDING", p, err)
	}
	if err := f.svc.DeleteVolume(f.ctx, f.c, p.ID); err != nil {
		t.Fatal(err)
	}
	if ok, _ := f.c.Volume.Query().Where(volume.ID(p.ID)).Exist(f.ctx); ok {
		t.Fatal("a PENDING volume outlived its delete")
	}
}

func (f *fixture) report(t *testing.T, r provision.Report) {
	t.Helper()
	if _, err := f.svc.ApplyReport(f.ctx, f.c, r); err != nil {
		t.Fatalf("report %+v: %v", r, err)
	}
}

func (f *fixture) volume(t *testing.T, id int) *ent.Volume {
	t.Helper()
	v, err := f.c.Volume.Query().Where(volume.ID(id)).WithNode().WithVirtualMachine().Only(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// balanced fails the test when a node's allocation or a quota's usage disagrees with the
// VMs and volumes that count in it.
func (f *fixture) balanced(t *testing.T) {
	t.Helper()
	v, err := f.site.Check(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(v) > 0 {
		t.Fatalf("books do not balance: %v", v)
	}
}

func isValidation(err error, field string) bool {
	e, ok := apierr.As(err)
	return ok && e.Code == apierr.CodeValidation && e.Field == field
}

// TestConcurrentAttachOfOneVolume: two transactions attach one PENDING volume to two VMs at
// once; exactly one wins, the other is CONFLICT, and the volume is charged and assigned
// once (the site's books balance). The loser is CONFLICT when it read the volume free, or
// VALIDATION on id when it read it taken already.
func TestConcurrentAttachOfOneVolume(t *testing.T) {
	f := newFixture(t)
	a, b := f.create(t, "race-a"), f.create(t, "race-b")
	v, err := f.svc.CreateVolume(f.ctx, f.c, ent.CreateVolumeInput{Name: "contended", SizeGB: 4, TenantID: f.site.Tenant})
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 2)
	start := make(chan struct{})
	for _, vm := range []int{a.ID, b.ID} {
		go func() {
			tx, err := f.c.Tx(f.ctx)
			if err != nil {
				errs <- err
				return
			}
			<-start
			if _, err := f.svc.AttachVolume(f.ctx, tx.Client(), v.ID, vm); err != nil {
				_ = tx.Rollback()
				errs <- err
				return
			}
			errs <- tx.Commit()
		}()
	}
	close(start)
	var ok, conflict int
	for range 2 {
		switch err := <-errs; {
		case err == nil:
			ok++
		case isCode(err, apierr.CodeConflict) || isValidation(err, "id"):
			conflict++
		default:
			t.Fatalf("attach: %v", err)
		}
	}
	if ok != 1 || conflict != 1 {
		t.Fatalf("%d attaches won, %d refused; want 1 and 1", ok, conflict)
	}
	if n, _ := f.c.Assignment.Query().Where(assignment.HasVolumeWith(volume.ID(v.ID))).Count(f.ctx); n != 1 {
		t.Fatalf("the volume has %d assignments, want 1", n)
	}
	f.balanced(t)
}

func isCode(err error, code apierr.Code) bool {
	e, ok := apierr.As(err)
	return ok && e.Code == code
}
