package provision_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hibiken/asynq"

	"github.com/virtflow/virtflow/controllers/provision"
	"github.com/virtflow/virtflow/domain/guest"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/auditlog"
	"github.com/virtflow/virtflow/ent/outboxtask"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// TestMain gives the package its own PostgreSQL database.
func TestMain(m *testing.M) { testdb.Main(m) }

// fixture is a site with one flavor and the provisioning service under test, whose clock
// stands still at clock.
type fixture struct {
	ctx   context.Context
	c     *ent.Client
	site  *placementtest.Site
	flav  *ent.Flavor
	svc   *provision.Service
	h     *provision.Handlers
	clock time.Time
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureOn(t, testdb.DSN(t))
}

// newFixtureOn is newFixture on database dsn: testdb.New(t) for a test that counts every row
// of a table (the package database holds the other tests' rows).
func newFixtureOn(t *testing.T, dsn string) *fixture {
	t.Helper()
	ctx := placementtest.Ctx()
	db, err := infra.OpenDatabase(ctx, dsn, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	site, err := placementtest.Build(ctx, db.Client, placementtest.Spec{Racks: 1, HostsPerRack: 2, CPU: 16, MemoryMB: 65536, DiskGB: 1000})
	if err != nil {
		t.Fatalf("build site: %v", err)
	}
	f, err := site.Flavor(ctx, 2, 2048, 20, false)
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	return &fixture{ctx: ctx, c: db.Client, site: site, flav: f, clock: clock,
		svc: provision.New(provision.Config{Clock: func() time.Time { return clock }}),
		h:   &provision.Handlers{Client: db.Client, Clock: func() time.Time { return clock }}}
}

// run runs the VM task kind for vm through the real handler, as a worker would.
func (f *fixture) run(t *testing.T, kind string, vm int, from int64) {
	t.Helper()
	payload, _ := json.Marshal(provision.Payload{VM: vm, From: from})
	if err := f.h.ProcessTask(f.ctx, asynq.NewTask(kind, payload)); err != nil {
		t.Fatalf("%s: %v", kind, err)
	}
}

func (f *fixture) vm(t *testing.T, id int) *ent.VirtualMachine {
	t.Helper()
	vm, err := f.c.VirtualMachine.Get(f.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return vm
}

func (f *fixture) assignment(t *testing.T, vm int) *ent.Assignment {
	t.Helper()
	a, err := f.c.Assignment.Query().Where(assignment.HasVirtualMachineWith(virtualmachine.ID(vm))).Only(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// tasks counts the recorded tasks of kind for vm.
func (f *fixture) tasks(t *testing.T, kind string, vm int) int {
	t.Helper()
	rows, err := f.c.OutboxTask.Query().Where(outboxtask.Kind(kind)).All(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range rows {
		var p provision.Payload
		if json.Unmarshal(r.Payload, &p) == nil && p.VM == vm {
			n++
		}
	}
	return n
}

func (f *fixture) create(t *testing.T, name string) *ent.VirtualMachine {
	t.Helper()
	vm, err := f.svc.CreateVM(f.ctx, f.c, ent.CreateVirtualMachineInput{Name: name, TenantID: f.site.Tenant,
		RegionID: f.site.Region, FlavorID: f.flav.ID})
	if err != nil {
		t.Fatalf("CreateVM: %v", err)
	}
	return vm
}

// TestRequestReportDelete walks one VM through the package's paths: the request (placed,
// INITIALIZING, vm:create recorded), the task (assignment written), the agent's reports
// (ACTIVE at the service's clock; a failure with a long multi-byte reason), the delete request
// and the final report that removes the VM.
func TestRequestReportDelete(t *testing.T) {
	f := newFixtureOn(t, testdb.New(t))
	vm := f.create(t, "walk")
	if vm.Status != virtualmachine.StatusInitializing || f.tasks(t, provision.TypeVMCreate, vm.ID) == 0 {
		t.Fatalf("after CreateVM: %s, %d vm:create tasks; want INITIALIZING and a task", vm.Status, f.tasks(t, provision.TypeVMCreate, vm.ID))
	}
	f.run(t, provision.TypeVMCreate, vm.ID, 0)
	a := f.assignment(t, vm.ID)
	if a.DesiredState != assignment.DesiredStateRunning || a.Generation != 1 || f.vm(t, vm.ID).Status != virtualmachine.StatusCreating {
		t.Fatalf("after vm:create: assignment %s gen %d, VM %s", a.DesiredState, a.Generation, f.vm(t, vm.ID).Status)
	}
	if at := f.vm(t, vm.ID).StatusChangedAt; !at.Equal(f.clock) {
		t.Fatalf("after vm:create: CREATING at %s; want the handlers' clock %s", at, f.clock)
	}
	f.run(t, provision.TypeVMCreate, vm.ID, 0) // idempotent
	if n, _ := f.c.Assignment.Query().Count(f.ctx); n != 1 {
		t.Fatalf("vm:create twice: %d assignments, want 1", n)
	}

	running := "running"
	if _, err := f.svc.ApplyReport(f.ctx, f.c, provision.Report{ID: a.ID, Generation: 1, Status: assignment.StatusApplied, ObservedState: &running}); err != nil {
		t.Fatal(err)
	}
	got := f.vm(t, vm.ID)
	if got.Status != virtualmachine.StatusActive || !got.StatusChangedAt.Equal(f.clock) {
		t.Fatalf("after APPLIED: %s at %s; want ACTIVE at the service's clock %s", got.Status, got.StatusChangedAt, f.clock)
	}
	// Both transitions are in the VM's audit rows, the VM's timeline: the worker's and the agent's.
	rows := f.c.AuditLog.Query().Where(auditlog.ObjectType("VirtualMachine"), auditlog.ObjectID(vm.ID)).
		Order(auditlog.ByID()).AllX(f.ctx)
	var transitions []string
	for _, r := range rows {
		var before, after struct{ Status string }
		_ = json.Unmarshal(r.Before, &before)
		_ = json.Unmarshal(r.After, &after)
		transitions = append(transitions, fmt.Sprintf("%s %s→%s", r.Action, before.Status, after.Status))
	}
	if want := []string{"assignVirtualMachine INITIALIZING→CREATING", "reportAssignmentStatus CREATING→ACTIVE"}; !slices.Equal(transitions, want) {
		t.Fatalf("VM audit rows %q, want %q", transitions, want)
	}

	// A report whose reason has a multi-byte character across every cut: the row is stored
	// (valid UTF-8, within the column) instead of refused, so the agent does not retry it forever.
	why := strings.Repeat("é", 700) // 1,400 bytes
	for _, pad := range []string{"", "x"} {
		reason := pad + why
		if _, err := f.svc.ApplyReport(f.ctx, f.c, provision.Report{ID: a.ID, Generation: 1, Status: assignment.StatusFailed, Reason: &reason}); err != nil {
			t.Fatalf("FAILED report with a %d-byte reason: %v", len(reason), err)
		}
		for what, s := range map[string]string{"VM": f.vm(t, vm.ID).StatusReason, "assignment": f.assignment(t, vm.ID).StatusReason} {
			if !utf8.ValidString(s) || len(s) > 1024 || !strings.Contains(s, "éé") {
				t.Fatalf("%s reason: %d bytes, valid %v", what, len(s), utf8.ValidString(s))
			}
		}
	}

	if err := f.svc.DeleteVM(f.ctx, f.c, vm.ID, false); err != nil {
		t.Fatal(err)
	}
	if got := f.vm(t, vm.ID); got.Status != virtualmachine.StatusDeleting || f.tasks(t, provision.TypeVMDelete, vm.ID) != 1 {
		t.Fatalf("after DeleteVM: %s, %d vm:delete tasks", got.Status, f.tasks(t, provision.TypeVMDelete, vm.ID))
	}
	f.run(t, provision.TypeVMDelete, vm.ID, 1)
	a = f.assignment(t, vm.ID)
	if a.DesiredState != assignment.DesiredStateAbsent || a.Generation != 2 {
		t.Fatalf("after vm:delete: %s gen %d; want ABSENT gen 2", a.DesiredState, a.Generation)
	}
	absent := "absent"
	if _, err := f.svc.ApplyReport(f.ctx, f.c, provision.Report{ID: a.ID, Generation: 2, Status: assignment.StatusApplied, ObservedState: &absent}); err != nil {
		t.Fatal(err)
	}
	if ok, _ := f.c.VirtualMachine.Query().Where(virtualmachine.ID(vm.ID)).Exist(f.ctx); ok {
		t.Fatal("the VM is still there after its node reported it absent")
	}
}

// TestReconcileRequeuesStuckCreate: a VM no worker created within the deadline gets its
// vm:create enqueued again, then fails once the requeues are spent. The reconciler's clock
// is driven by the test: the deadline passes because the clock moves, not the wall clock.
func TestReconcileRequeuesStuckCreate(t *testing.T) {
	f := newFixtureOn(t, testdb.New(t))
	vm := f.create(t, "stuck")
	if !vm.StatusChangedAt.Equal(f.clock) {
		t.Fatalf("new VM dated %s; want the service's clock %s", vm.StatusChangedAt, f.clock)
	}
	now := f.clock
	r := &provision.Reconciler{Client: f.c, Config: provision.ReconcileConfig{Deadline: time.Minute, MaxRequeue: 1},
		Clock: func() time.Time { return now }}
	if requeued, failed, err := r.Once(f.ctx); err != nil || requeued+failed != 0 {
		t.Fatalf("Once before the deadline = %d requeued, %d failed, %v; want nothing done", requeued, failed, err)
	}
	age := func() { now = now.Add(time.Hour) }
	age()
	requeued, failed, err := r.Once(f.ctx)
	if err != nil || requeued != 1 || failed != 0 {
		t.Fatalf("Once = %d requeued, %d failed, %v; want 1, 0", requeued, failed, err)
	}
	if n := f.tasks(t, provision.TypeVMCreate, vm.ID); n != 2 {
		t.Fatalf("%d vm:create tasks, want the first and its requeue", n)
	}
	age()
	if requeued, failed, err = r.Once(f.ctx); err != nil || requeued != 0 || failed != 1 {
		t.Fatalf("second Once = %d requeued, %d failed, %v; want 0, 1", requeued, failed, err)
	}
	if got := f.vm(t, vm.ID); got.Status != virtualmachine.StatusError || !strings.Contains(got.StatusReason, "no worker took the request") ||
		!got.StatusChangedAt.Equal(now) {
		t.Fatalf("after the requeues: %s %q at %s; want ERROR at the reconciler's clock %s", got.Status, got.StatusReason, got.StatusChangedAt, now)
	}
}

// TestGuestStateFollowsReports: a VM whose drive carries a credential becomes BOOTING when
// its node reports the domain running, READY when the report carries the QEMU guest agent's
// answer (with its host name and addresses), and UNKNOWN again, without them, when the
// domain stops. A VM without a credential is never waited for (stays UNKNOWN).
func TestGuestStateFollowsReports(t *testing.T) {
	f := newFixture(t)
	vm := f.create(t, "guest")
	bare := f.create(t, "bare")
	f.run(t, provision.TypeVMCreate, vm.ID, 0)
	f.run(t, provision.TypeVMCreate, bare.ID, 0)
	a, b := f.assignment(t, vm.ID), f.assignment(t, bare.ID)
	_, hash, err := guest.NewCredential()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Guest().RegisterCredential(f.ctx, f.c, a.ID, a.Generation, hash); err != nil {
		t.Fatal(err)
	}
	running, shutoff := "running", "shutoff"
	for _, id := range []int{a.ID, b.ID} {
		if _, err := f.svc.ApplyReport(f.ctx, f.c, provision.Report{ID: id, Generation: 1, Status: assignment.StatusApplied, ObservedState: &running}); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.vm(t, vm.ID); got.Status != virtualmachine.StatusActive || got.GuestState != virtualmachine.GuestStateBooting {
		t.Fatalf("after the running report: %s / guest %s; want ACTIVE / BOOTING", got.Status, got.GuestState)
	}
	if got := f.vm(t, bare.ID); got.GuestState != virtualmachine.GuestStateUnknown {
		t.Fatalf("a VM without a credential is guest %s; want UNKNOWN", got.GuestState)
	}
	ga := &guest.Report{Hostname: "guest", Addresses: []string{"192.0.2.7", "fe80::1"}}
	if _, err := f.svc.ApplyReport(f.ctx, f.c, provision.Report{ID: a.ID, Generation: 1, Status: assignment.StatusApplied,
		ObservedState: &running, GuestAgent: ga}); err != nil {
		t.Fatal(err)
	}
	got := f.vm(t, vm.ID)
	if got.GuestState != virtualmachine.GuestStateReady || got.GuestHostname != "guest" || !slices.Equal(got.GuestAddresses, []string{"192.0.2.7"}) || got.GuestReadyAt == nil {
		t.Fatalf("after the guest agent's answer: %s %q %v %v; want READY guest [192.0.2.7]", got.GuestState, got.GuestHostname, got.GuestAddresses, got.GuestReadyAt)
	}
	// A later running report without the guest agent keeps READY.
	if _, err := f.svc.ApplyReport(f.ctx, f.c, provision.Report{ID: a.ID, Generation: 1, Status: assignment.StatusApplied, ObservedState: &running}); err != nil {
		t.Fatal(err)
	}
	if got := f.vm(t, vm.ID); got.GuestState != virtualmachine.GuestStateReady {
		t.Fatalf("a repeated running report moved the guest to %s", got.GuestState)
	}
	if _, err := f.svc.Stop(f.ctx, f.c, vm.ID); err != nil {
		t.Fatal(err)
	}
	f.run(t, provision.TypeVMStop, vm.ID, 1)
	a = f.assignment(t, vm.ID)
	if _, err := f.svc.ApplyReport(f.ctx, f.c, provision.Report{ID: a.ID, Generation: a.Generation, Status: assignment.StatusApplied, ObservedState: &shutoff}); err != nil {
		t.Fatal(err)
	}
	if got := f.vm(t, vm.ID); got.Status != virtualmachine.StatusStopped || got.GuestState != virtualmachine.GuestStateUnknown ||
		got.GuestReadyAt != nil || len(got.GuestAddresses) != 0 {
		t.Fatalf("after stop: %s / guest %s %v %v; want STOPPED / UNKNOWN with nothing reported", got.Status, got.GuestState, got.GuestReadyAt, got.GuestAddresses)
	}
}
