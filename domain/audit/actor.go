package audit

import (
	"context"

	"github.com/virtflow/virtflow/authz"
)

// SystemActor is a VirtFlow component that changes state on its own, not on a user's
// request. Its changes are audited like a user's mutations, through Write with
// Entry.System set, in the transaction of the change; the rows name it "system:<component>"
// (find them with auditLogs(where: {actorHasPrefix: "system:"})).
//
// Every component that changes state on its own is listed here: the package's tests walk
// SystemActors and prove each one leaves an audit row in the transaction of its change.
type SystemActor string

// The system actors.
const (
	// NodeMonitor marks silent nodes NOT_READY and DOWN, auto-cordons and auto-drains them.
	NodeMonitor SystemActor = "nodemonitor"
	// Drain finishes drains: a node becomes DRAINED, or FAILED at its deadline.
	Drain SystemActor = "drain"
	// Reconcile enqueues a stuck VM's creation again, or sets a stuck VM to ERROR.
	Reconcile SystemActor = "reconcile"
	// Worker sets a VM to ERROR when its provisioning task failed for good.
	Worker SystemActor = "worker"
	// Guest records a guest's own report (package guest: READY on its call) and marks a
	// guest that missed its deadline UNREACHABLE.
	Guest SystemActor = "guest"
	// Traffic chooses the nodes of load balancers, lists their members and sets their status
	// from the nodes' reports, and publishes global services (package traffic).
	Traffic SystemActor = "traffic"
	// BackupSchedule takes the VMs' scheduled backups and deletes those beyond their
	// retention (provision.BackupScheduler).
	BackupSchedule SystemActor = "backup-schedule"
)

// SystemActors returns every system actor.
func SystemActors() []SystemActor {
	return []SystemActor{NodeMonitor, Drain, Reconcile, Worker, Guest, Traffic, BackupSchedule}
}

// Name is the actor of a's audit rows: "system:<component>", the name of a's system viewer.
func (a SystemActor) Name() string { return authz.System(string(a)).Name }

// Context returns ctx acting as a (authz.SystemContext).
func (a SystemActor) Context(ctx context.Context) context.Context {
	return authz.SystemContext(ctx, string(a))
}
