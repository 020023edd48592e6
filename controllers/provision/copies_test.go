package provision_test

import (
	"sync"
	"testing"

	"github.com/virtflow/virtflow/controllers/provision"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/backup"
	"github.com/virtflow/virtflow/ent/image"
	"github.com/virtflow/virtflow/ent/reservationinterval"
	"github.com/virtflow/virtflow/ent/snapshot"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// copyVM creates a VM with an image (a root disk to copy), realized and reported running.
func copyVM(t *testing.T, f *fixture, name string) *ent.VirtualMachine {
	t.Helper()
	img := f.c.Image.Create().SetName(uniqName("img")).SetSource("https://images.invalid/x.qcow2").SetStatus(image.StatusActive).SaveX(f.ctx)
	vm := f.create(t, name)
	f.c.VirtualMachine.UpdateOneID(vm.ID).SetImageID(img.ID).ExecX(f.ctx)
	f.run(t, provision.TypeVMCreate, vm.ID, 0)
	a := f.assignment(t, vm.ID)
	running := "running"
	f.report(t, provision.Report{ID: a.ID, Generation: 1, Status: assignment.StatusApplied, ObservedState: &running, VolumeIDs: []int{}})
	if got := f.vm(t, vm.ID).Status; got != virtualmachine.StatusActive {
		t.Fatalf("VM %s: %s; want ACTIVE", name, got)
	}
	return vm
}

var nameSeq int
var nameMu sync.Mutex

func uniqName(p string) string {
	nameMu.Lock()
	defer nameMu.Unlock()
	nameSeq++
	return p + "-" + string(rune('a'+nameSeq%26)) + string(rune('a'+(nameSeq/26)%26))
}

// TestSnapshotLifecycle walks a snapshot through its states, each moved only by the agent's
// report: PENDING (charged to the snapshot quota, metered, its own assignment), CREATING on
// the agent's APPLYING, AVAILABLE on APPLIED; a revert refused while the VM runs, accepted
// once it is stopped (REVERTING at a new generation, AVAILABLE again on APPLIED, a stale
// report of the old generation ignored); a second snapshot over the quota refused with
// nothing written; deleted (DELETING, then gone, quota given back, interval closed).
func TestSnapshotLifecycle(t *testing.T) {
	f := newFixture(t)
	q := f.c.Quota.Create().SetTenantID(f.site.Tenant).SetHostGroupID(f.site.HostGroup).SetSnapshotGB(f.flav.DiskGB + 5).SaveX(f.ctx)
	vm := copyVM(t, f, "snap-me")

	s, err := f.svc.CreateSnapshot(f.ctx, f.c, vm.ID, "before", nil)
	if err != nil {
		t.Fatalf("CreateSnapshot: %v", err)
	}
	if s.Status != snapshot.StatusPending || s.SizeGB != f.flav.DiskGB {
		t.Fatalf("created: %s %d GiB; want PENDING at the root disk's %d GiB", s.Status, s.SizeGB, f.flav.DiskGB)
	}
	if got := f.c.Quota.GetX(f.ctx, q.ID).UsedSnapshotGB; got != f.flav.DiskGB {
		t.Fatalf("quota uses %d GiB of snapshots; want %d", got, f.flav.DiskGB)
	}
	sa := f.c.Assignment.Query().Where(assignment.HasSnapshotWith(snapshot.ID(s.ID))).OnlyX(f.ctx)
	if sa.DesiredState != assignment.DesiredStateRunning || sa.Status != assignment.StatusPending {
		t.Fatalf("snapshot's assignment: %s %s", sa.DesiredState, sa.Status)
	}
	// Over the quota: QUOTA_EXCEEDED, and nothing of it stays.
	tx, err := f.c.Tx(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.CreateSnapshot(f.ctx, tx.Client(), vm.ID, "second", nil)
	_ = tx.Rollback()
	if e, ok := apierr.As(err); !ok || e.Code != apierr.CodeQuotaExceeded {
		t.Fatalf("snapshot over the quota: %v; want QUOTA_EXCEEDED", err)
	}
	if n := f.c.Snapshot.Query().Where(snapshot.HasVirtualMachineWith(virtualmachine.ID(vm.ID))).CountX(f.ctx); n != 1 {
		t.Fatalf("%d snapshots of the VM after a refused one; want 1", n)
	}

	copying, present := "copying", "present"
	f.report(t, provision.Report{ID: sa.ID, Generation: 1, Status: assignment.StatusApplying, ObservedState: &copying})
	if got := f.c.Snapshot.GetX(f.ctx, s.ID).Status; got != snapshot.StatusCreating {
		t.Fatalf("after the agent started: %s; want CREATING", got)
	}
	f.report(t, provision.Report{ID: sa.ID, Generation: 1, Status: assignment.StatusApplied, ObservedState: &present})
	if got := f.c.Snapshot.GetX(f.ctx, s.ID).Status; got != snapshot.StatusAvailable {
		t.Fatalf("after the copy: %s; want AVAILABLE", got)
	}

	if _, err := f.svc.RevertSnapshot(f.ctx, f.c, s.ID); !isValidation(err, "id") {
		t.Fatalf("revert of a running VM: %v; want VALIDATION on id", err)
	}
	f.c.VirtualMachine.UpdateOneID(vm.ID).SetStatus(virtualmachine.StatusStopped).ExecX(f.ctx)
	if got, err := f.svc.RevertSnapshot(f.ctx, f.c, s.ID); err != nil || got.Status != snapshot.StatusReverting {
		t.Fatalf("revert: %v %v; want REVERTING", got, err)
	}
	sa = f.c.Assignment.GetX(f.ctx, sa.ID)
	if sa.Generation != 2 || sa.Status != assignment.StatusPending {
		t.Fatalf("revert's assignment: gen %d %s; want gen 2 PENDING", sa.Generation, sa.Status)
	}
	// A late report of the first generation does not end the revert.
	f.report(t, provision.Report{ID: sa.ID, Generation: 1, Status: assignment.StatusApplied, ObservedState: &present})
	if got := f.c.Snapshot.GetX(f.ctx, s.ID).Status; got != snapshot.StatusReverting {
		t.Fatalf("after a stale report: %s; want REVERTING", got)
	}
	reverted := "reverted"
	f.report(t, provision.Report{ID: sa.ID, Generation: 2, Status: assignment.StatusApplied, ObservedState: &reverted})
	if got := f.c.Snapshot.GetX(f.ctx, s.ID); got.Status != snapshot.StatusAvailable || got.Reverts != 1 {
		t.Fatalf("after the revert: %s, %d reverts; want AVAILABLE, 1", got.Status, got.Reverts)
	}

	if err := f.svc.DeleteSnapshot(f.ctx, f.c, s.ID); err != nil {
		t.Fatal(err)
	}
	sa = f.c.Assignment.GetX(f.ctx, sa.ID)
	if got := f.c.Snapshot.GetX(f.ctx, s.ID).Status; got != snapshot.StatusDeleting || sa.DesiredState != assignment.DesiredStateAbsent {
		t.Fatalf("after delete: %s, assignment %s; want DELETING and ABSENT", got, sa.DesiredState)
	}
	absent := "absent"
	f.report(t, provision.Report{ID: sa.ID, Generation: sa.Generation, Status: assignment.StatusApplied, ObservedState: &absent})
	if ok := f.c.Snapshot.Query().Where(snapshot.ID(s.ID)).ExistX(f.ctx); ok {
		t.Fatal("the snapshot is still there after its node deleted it")
	}
	if got := f.c.Quota.GetX(f.ctx, q.ID).UsedSnapshotGB; got != 0 {
		t.Fatalf("quota uses %d GiB of snapshots after the delete; want 0", got)
	}
	ivs := f.c.ReservationInterval.Query().Where(reservationinterval.TenantID(f.site.Tenant),
		reservationinterval.KindEQ(reservationinterval.KindSNAPSHOT)).AllX(f.ctx)
	if len(ivs) != 1 || ivs[0].ResourceID != s.ID || ivs[0].EndedAt == nil || ivs[0].Quantity != f.flav.DiskGB {
		t.Fatalf("snapshot intervals %v; want one of snapshot %d, closed", ivs, s.ID)
	}
}

// TestBackupRestoreAndClone: a backup needs the region's backup target; it is AVAILABLE on
// the agent's report; restoreBackup makes a new VM in the backup's region whose restoredFrom
// names it (a flavor too small for it is VALIDATION on flavorID); a clone's VM is created
// while its backup is PENDING and its assignment is woken (PENDING) when the backup becomes
// AVAILABLE.
func TestBackupRestoreAndClone(t *testing.T) {
	f := newFixture(t)
	vm := copyVM(t, f, "back-me-up")
	if _, err := f.svc.CreateBackup(f.ctx, f.c, vm.ID, "nightly", nil, false); !isValidation(err, "virtualMachineID") {
		t.Fatalf("backup without a target: %v; want VALIDATION on virtualMachineID", err)
	}
	f.c.Region.UpdateOneID(f.site.Region).SetBackupTarget(t.TempDir()).ExecX(f.ctx)
	b, err := f.svc.CreateBackup(f.ctx, f.c, vm.ID, "nightly", nil, false)
	if err != nil {
		t.Fatalf("CreateBackup: %v", err)
	}
	input := ent.CreateVirtualMachineInput{Name: "restored", TenantID: f.site.Tenant, RegionID: f.site.Region, FlavorID: f.flav.ID}
	if _, err := f.svc.RestoreBackup(f.ctx, f.c, b.ID, input); !isValidation(err, "id") {
		t.Fatalf("restore of a PENDING backup: %v; want VALIDATION on id", err)
	}
	ba := f.c.Assignment.Query().Where(assignment.HasBackupWith(backup.ID(b.ID))).OnlyX(f.ctx)
	present := "present"
	f.report(t, provision.Report{ID: ba.ID, Generation: 1, Status: assignment.StatusApplied, ObservedState: &present})
	if got := f.c.Backup.GetX(f.ctx, b.ID); got.Status != backup.StatusAvailable || got.Location == "" {
		t.Fatalf("after the copy: %s at %q; want AVAILABLE with a location", got.Status, got.Location)
	}
	small, err := f.site.Flavor(f.ctx, 1, 1024, 5, false)
	if err != nil {
		t.Fatal(err)
	}
	tooSmall := input
	tooSmall.FlavorID = small.ID
	if _, err := f.svc.RestoreBackup(f.ctx, f.c, b.ID, tooSmall); !isValidation(err, "flavorID") {
		t.Fatalf("restore into a smaller disk: %v; want VALIDATION on flavorID", err)
	}
	r, err := f.svc.RestoreBackup(f.ctx, f.c, b.ID, input)
	if err != nil {
		t.Fatalf("RestoreBackup: %v", err)
	}
	if got := f.c.VirtualMachine.QueryRestoredFrom(r).OnlyIDX(f.ctx); got != b.ID {
		t.Fatalf("restored VM's backup: %d; want %d", got, b.ID)
	}

	clone := input
	clone.Name = "clone"
	c, err := f.svc.CloneVM(f.ctx, f.c, vm.ID, clone)
	if err != nil {
		t.Fatalf("CloneVM: %v", err)
	}
	cb := f.c.VirtualMachine.QueryRestoredFrom(c).OnlyX(f.ctx)
	if cb.Status != backup.StatusPending || cb.Name != "clone-clone" {
		t.Fatalf("clone's backup: %s %s; want clone-clone PENDING", cb.Name, cb.Status)
	}
	f.run(t, provision.TypeVMCreate, c.ID, 0)
	ca := f.assignment(t, c.ID)
	waiting := "waiting for backup"
	f.report(t, provision.Report{ID: ca.ID, Generation: 1, Status: assignment.StatusApplying, Reason: &waiting})
	cba := f.c.Assignment.Query().Where(assignment.HasBackupWith(backup.ID(cb.ID))).OnlyX(f.ctx)
	f.report(t, provision.Report{ID: cba.ID, Generation: 1, Status: assignment.StatusApplied, ObservedState: &present})
	if got := f.assignment(t, c.ID).Status; got != assignment.StatusPending {
		t.Fatalf("clone's assignment once its backup is available: %s; want PENDING (woken)", got)
	}
}

// TestConcurrentSnapshotsRespectQuota: many transactions take snapshots at once against a
// quota with room for exactly two; the database admits two, the others are QUOTA_EXCEEDED,
// and the usage equals what was admitted.
func TestConcurrentSnapshotsRespectQuota(t *testing.T) {
	f := newFixture(t)
	q := f.c.Quota.Create().SetTenantID(f.site.Tenant).SetHostGroupID(f.site.HostGroup).SetSnapshotGB(2 * f.flav.DiskGB).SaveX(f.ctx)
	vm := copyVM(t, f, "racy")
	const n = 6
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tx, err := f.c.Tx(f.ctx)
			if err != nil {
				errs[i] = err
				return
			}
			if _, err := f.svc.CreateSnapshot(f.ctx, tx.Client(), vm.ID, uniqName("s"), nil); err != nil {
				_ = tx.Rollback()
				errs[i] = err
				return
			}
			errs[i] = tx.Commit()
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		} else if e, isAPI := apierr.As(err); !isAPI || e.Code != apierr.CodeQuotaExceeded {
			t.Errorf("a concurrent snapshot failed with %v; want QUOTA_EXCEEDED", err)
		}
	}
	if ok != 2 {
		t.Fatalf("%d snapshots admitted; want 2", ok)
	}
	if got := f.c.Quota.GetX(f.ctx, q.ID).UsedSnapshotGB; got != 2*f.flav.DiskGB {
		t.Fatalf("quota uses %d GiB; want %d", got, 2*f.flav.DiskGB)
	}
}
