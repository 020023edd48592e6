package provision

import (
	"context"
	"fmt"
	"slices"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/guest"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/store/rowlock"
	"github.com/virtflow/virtflow/store/truncate"
)

// Report is what a node agent observed of one assignment.
type Report struct {
	ID            int
	Generation    int64
	Status        assignment.Status
	ObservedState *string // what the hypervisor says: running, shut-off, absent…
	Reason        *string // what went wrong, or what is going on
	// VolumeIDs, for a VM's assignment, are the volumes its domain has now; nil when the
	// agent did not say (then the VM's volumes keep their state).
	VolumeIDs []int
	// GuestAgent, for a running VM, is what the QEMU guest agent inside it answered; nil
	// when none answered.
	GuestAgent *guest.Report
	// Routes, for a VM's assignment in routed network mode, are the routes of the VM's
	// addresses on the node (Node and UpdatedAt are filled in here); nil when not reported.
	Routes []fieldtype.VMRoute
}

// waiting lists, per desired state, the VM states in which a report about that desired
// state moves the VM.
var waiting = map[assignment.DesiredState][]virtualmachine.Status{
	assignment.DesiredStateRunning: {virtualmachine.StatusCreating, virtualmachine.StatusStarting,
		virtualmachine.StatusRebooting, virtualmachine.StatusActive, virtualmachine.StatusError, virtualmachine.StatusUnknown,
		virtualmachine.StatusMoving},
	assignment.DesiredStateStopped: {virtualmachine.StatusStopping, virtualmachine.StatusStopped, virtualmachine.StatusError,
		virtualmachine.StatusUnknown, virtualmachine.StatusMoving},
	assignment.DesiredStateAbsent: {virtualmachine.StatusDeleting},
}

// ApplyReport records a node agent's report on its assignment, as the viewer in ctx (the
// node's agent, or an operator), in client's transaction. A report for an older generation
// than the assignment's is ignored (the assignment is returned unchanged); one for a newer
// generation is VALIDATION on field generation. The VM of the assignment moves as the
// package documentation says; an APPLIED report of an ABSENT assignment finalizes the
// delete and returns the assignment as it was before it was deleted.
func (s *Service) ApplyReport(ctx context.Context, client *ent.Client, r Report) (*ent.Assignment, error) {
	a, err := client.Assignment.Query().Where(assignment.ID(r.ID)).WithNode().Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apierr.NotFound("assignment %d not found", r.ID)
	}
	if err != nil {
		return nil, err
	}
	switch {
	case r.Generation > a.Generation:
		return nil, apierr.Validation("generation", "assignment %d is at generation %d; %d does not exist yet", a.ID, a.Generation, r.Generation)
	case r.Generation < a.Generation:
		return a, nil // stale: the agent acted on an older desired state
	}
	// The VM's row is locked before the assignment's, always: a drain or a move locks the
	// VM, then its assignments, and the same order here keeps a report that races them from
	// deadlocking (PostgreSQL would abort one of the two).
	// (Not through the assignment's edge: that query is DISTINCT, which FOR UPDATE refuses.)
	locked, err := client.VirtualMachine.Query().Where(virtualmachine.HasAssignmentsWith(assignment.ID(a.ID))).
		WithNode().Modify(rowlock.ForUpdate).Only(system(ctx))
	if err != nil && !ent.IsNotFound(err) {
		return nil, err
	}
	if locked != nil && r.Routes != nil {
		if locked.Edges.Node != nil && locked.Edges.Node.ID == a.Edges.Node.ID {
			if err := s.applyRoutes(ctx, client, a, locked, r.Routes); err != nil {
				return nil, err
			}
		}
	}
	// As the viewer: an agent may write its own node's assignments only.
	observed, why := deref(r.ObservedState), deref(r.Reason)
	n, err := client.Assignment.Update().Where(assignment.ID(a.ID), assignment.Generation(r.Generation)).
		SetStatus(r.Status).SetObservedState(observed).SetStatusReason(truncate.String(why, maxReason)).Save(ctx)
	if err != nil {
		return nil, err
	}
	if n == 0 { // a newer generation was written meanwhile
		return client.Assignment.Get(ctx, a.ID)
	}
	sys := system(ctx)
	// As the system: the agent may not read the tenant's volume.
	if v, err := client.Assignment.QueryVolume(a).WithTenant().Only(sys); err == nil {
		return s.applyVolumeReport(ctx, client, a, v, r)
	} else if !ent.IsNotFound(err) {
		return nil, err
	}
	if snap, err := client.Assignment.QuerySnapshot(a).WithTenant().WithNode().Only(sys); err == nil {
		return s.applySnapshotReport(ctx, client, a, snap, r)
	} else if !ent.IsNotFound(err) {
		return nil, err
	}
	if b, err := client.Assignment.QueryBackup(a).WithTenant().WithNode().Only(sys); err == nil {
		return s.applyBackupReport(ctx, client, a, b, r)
	} else if !ent.IsNotFound(err) {
		return nil, err
	}
	if img, err := client.Assignment.QueryImage(a).Only(sys); err == nil {
		return s.applyImageReport(ctx, client, a, img, r)
	} else if !ent.IsNotFound(err) {
		return nil, err
	}
	vm, err := client.Assignment.QueryVirtualMachine(a).WithNode().Only(sys)
	if ent.IsNotFound(err) {
		// The VM was deleted with force: its leftover domain is gone now, and so goes this
		// assignment, which only existed to have it removed.
		if a.DesiredState == assignment.DesiredStateAbsent && r.Status == assignment.StatusApplied {
			out, err := client.Assignment.Get(ctx, a.ID)
			if err != nil {
				return nil, err
			}
			return out, client.Assignment.DeleteOneID(a.ID).Exec(sys)
		}
		return client.Assignment.Get(ctx, a.ID)
	}
	if err != nil {
		return nil, err
	}
	if vm.Edges.Node == nil || vm.Edges.Node.ID != a.Edges.Node.ID {
		// The old copy of a VM moved to another node (a drain or a resize); the VM's status
		// follows its new node. Once gone, the old assignment has served its purpose as soon
		// as the VM is assigned on its new node (a drain that waits for this report to
		// recreate the VM still needs it until then): it is deleted, so that nothing is left
		// that a later move back to this node could revive.
		out, err := client.Assignment.Get(ctx, a.ID)
		if err != nil || a.DesiredState != assignment.DesiredStateAbsent || r.Status != assignment.StatusApplied || vm.Edges.Node == nil {
			return out, err
		}
		assigned, err := client.Assignment.Query().Where(assignment.HasVirtualMachineWith(virtualmachine.ID(vm.ID)),
			assignment.HasNodeWith(computenode.ID(vm.Edges.Node.ID))).Exist(sys)
		if err != nil || !assigned {
			return out, err
		}
		return out, client.Assignment.DeleteOneID(a.ID).Exec(sys)
	}
	if r.VolumeIDs != nil {
		if err := applyVolumeIDs(ctx, client, vm, r.VolumeIDs, why); err != nil {
			return nil, err
		}
	}
	if out, err := s.applyVMReport(ctx, client, a, vm, r, observed, why); err != nil || out != nil {
		return out, err // out: the assignment of a finished delete, gone now
	}
	// After the status: the guest agent's word is newer than the domain's start.
	if err := s.applyGuestReport(ctx, client, a, vm, r); err != nil {
		return nil, err
	}
	return client.Assignment.Get(ctx, a.ID)
}

// applyVMReport moves VM vm (of assignment a, on a's node) for report r as the package
// documentation says; an APPLIED report of an ABSENT assignment finalizes the delete and
// returns the assignment as it was (nil otherwise).
func (s *Service) applyVMReport(ctx context.Context, client *ent.Client, a *ent.Assignment, vm *ent.VirtualMachine, r Report, observed, why string) (*ent.Assignment, error) {
	sys := system(ctx)
	if !slices.Contains(waiting[a.DesiredState], vm.Status) {
		return nil, nil
	}
	// A reboot's previous generation wanted RUNNING too: an APPLIED report repeated for a
	// generation already APPLIED comes from before the vm:reboot task bumped it.
	if vm.Status == virtualmachine.StatusRebooting && a.Status == assignment.StatusApplied && r.Status == assignment.StatusApplied {
		return nil, nil
	}
	// Tenants read these reasons: they never name the node (operators see the node edge).
	var status virtualmachine.Status
	var reason string
	switch r.Status {
	case assignment.StatusApplied:
		switch a.DesiredState {
		case assignment.DesiredStateRunning:
			status, reason = virtualmachine.StatusActive, "running"
		case assignment.DesiredStateStopped:
			status, reason = virtualmachine.StatusStopped, "stopped"
			if vm.Status == virtualmachine.StatusMoving {
				reason = "stopped on its new node"
			}
		case assignment.DesiredStateAbsent:
			return a, s.finalize(ctx, client, a, vm)
		}
	case assignment.StatusFailed:
		status = virtualmachine.StatusError
		reason = fmt.Sprintf("its node could not make it %s: %s", a.DesiredState, orUnknown(why))
	case assignment.StatusApplying:
		status, reason = vm.Status, fmt.Sprintf("its node is working on it (generation %d)", a.Generation)
		if why != "" {
			reason += ": " + why
		}
	default:
		return nil, nil
	}
	if vm.Status == virtualmachine.StatusMoving && status == vm.Status && r.Status == assignment.StatusApplying {
		reason = "moving: " + reason
	}
	reason = truncate.String(reason, maxReason)
	u := client.VirtualMachine.UpdateOne(vm).SetStatusReason(reason)
	if status != virtualmachine.StatusMoving {
		u.ClearStateAfterMove()
	}
	if status != vm.Status {
		u.SetStatus(status).SetStatusChangedAt(s.now())
	}
	// The guest's state follows its domain: BOOTING once it runs, UNKNOWN once it stopped.
	guestChanged := false
	if r.Status == assignment.StatusApplied && a.DesiredState != assignment.DesiredStateAbsent {
		guestChanged = s.guest.MarkRunning(vm, u, observed == "running")
	}
	if err := u.Exec(sys); err != nil {
		return nil, fmt.Errorf("update VM %d: %w", vm.ID, err)
	}
	if status != vm.Status || guestChanged {
		// The VM's timeline (its audit rows) shows the transition, the reason and the node
		// agent that reported it.
		if err := auditVM(ctx, client, "", "reportAssignmentStatus", vm); err != nil {
			return nil, err
		}
	}
	if err := settleService(ctx, client, vm.ID, s.now()); err != nil {
		return nil, err
	}
	// And again in a task of its own once this commits (see the package documentation).
	if err := enqueueServiceReconcile(ctx, client, vm.ID, s.now()); err != nil {
		return nil, err
	}
	return nil, nil
}

// applyGuestReport records what the QEMU guest agent of the running VM vm answered its
// node's agent (r.GuestAgent): the guest's own word that it is up.
func (s *Service) applyGuestReport(ctx context.Context, client *ent.Client, a *ent.Assignment, vm *ent.VirtualMachine, r Report) error {
	if r.GuestAgent == nil || a.DesiredState != assignment.DesiredStateRunning || deref(r.ObservedState) != "running" {
		return nil
	}
	if err := s.guest.ReadyFromAgent(ctx, client, vm.ID, *r.GuestAgent); err != nil {
		return fmt.Errorf("guest agent report of VM %d: %w", vm.ID, err)
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func orUnknown(s string) string {
	if s == "" {
		return "no reason given"
	}
	return s
}

// finalize ends the delete of a VM its agent reports gone: the assignment, then the VM
// (placement.Placer.DeleteVM gives back what it held), as the system.
func (s *Service) finalize(ctx context.Context, client *ent.Client, a *ent.Assignment, vm *ent.VirtualMachine) error {
	sys := system(ctx)
	// A replica gone changes its service's count: reconcile the service once this commits.
	if err := enqueueServiceReconcile(ctx, client, vm.ID, s.now()); err != nil {
		return err
	}
	if err := client.Assignment.DeleteOneID(a.ID).Exec(sys); err != nil {
		return fmt.Errorf("delete assignment %d of VM %d: %w", a.ID, vm.ID, err)
	}
	// Copies on other nodes (the old copy of a VM moved by a forced drain) are left to their
	// agents.
	if err := orphanAssignments(ctx, client, vm); err != nil {
		return err
	}
	return s.placer.DeleteVM(sys, client, vm.ID)
}

// maxReason is the size in bytes of the status_reason columns (ent/schema).
const maxReason = 1024
