package provision

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/hibiken/asynq"

	"github.com/virtflow/virtflow/domain/audit"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/store/dbtx"
	"github.com/virtflow/virtflow/store/rowlock"
	"github.com/virtflow/virtflow/store/truncate"
)

// Handlers carry out the VM tasks against the database. Register them with [Handlers.Register]
// and install [Handlers.Failed] as the Asynq server's ErrorHandler.
type Handlers struct {
	// Client is the database (not a transaction: every task runs in one of its own).
	Client *ent.Client
	// Log receives what the handlers do; nil discards it.
	Log *slog.Logger
	// Fault, when set, runs before every task and fails it with its error: a fault-injection
	// point for tests and chaos drills. Nil in production.
	Fault func(kind string, vm int) error
	// Clock gives the time of status changes (default time.Now): internal/app passes the
	// provisioning Service's (Service.Clock), tests their own.
	Clock func() time.Time
}

// Kinds are the task types the handlers serve.
var Kinds = []string{TypeVMCreate, TypeVMStart, TypeVMStop, TypeVMReboot, TypeVMDelete, TypeServiceReconcile}

// Register adds the VM task types and regionservice:reconcile to mux.
func (h *Handlers) Register(mux *asynq.ServeMux) {
	for _, k := range Kinds {
		mux.Handle(k, h)
	}
}

func (h *Handlers) now() time.Time {
	if h.Clock == nil {
		return time.Now()
	}
	return h.Clock()
}

func (h *Handlers) log() *slog.Logger {
	if h.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return h.Log
}

// ProcessTask carries out one VM task; see the package documentation for what each does.
func (h *Handlers) ProcessTask(ctx context.Context, t *asynq.Task) error {
	if t.Type() == TypeServiceReconcile {
		return h.reconcileService(ctx, t)
	}
	act, ok := actions[t.Type()]
	if !ok {
		return fmt.Errorf("unknown task type %q: %w", t.Type(), asynq.SkipRetry)
	}
	p, err := decode(t)
	if err != nil {
		return err
	}
	if h.Fault != nil {
		if err := h.Fault(t.Type(), p.VM); err != nil {
			return err
		}
	}
	_, err = dbtx.Run(ctx, h.Client, func(c *ent.Client) error { return h.apply(ctx, c, act, p) })
	if errors.Is(err, ErrNotReady) {
		h.waiting(ctx, p.VM, err)
	}
	return err
}

// waiting records on a VM that vm:create waits for something not ready yet (its image),
// in a transaction of its own: the task's was rolled back.
func (h *Handlers) waiting(ctx context.Context, id int, cause error) {
	reason := truncate.String(fmt.Sprintf("waiting to be provisioned: %v", cause), maxReason)
	err := h.Client.VirtualMachine.Update().
		Where(virtualmachine.ID(id), virtualmachine.StatusIn(virtualmachine.StatusInitializing, virtualmachine.StatusCreating)).
		SetStatusReason(reason).Exec(system(ctx))
	if err != nil {
		h.log().Warn("could not record what a VM waits for", "vm", id, "err", err)
	}
	h.log().Info("VM not ready to provision; will look again", "vm", id, "reason", cause)
}

// apply sets the VM's assignment for act, in the task's transaction.
func (h *Handlers) apply(ctx context.Context, c *ent.Client, act action, p Payload) error {
	sys := system(ctx)
	q := c.VirtualMachine.Query().Where(virtualmachine.ID(p.VM)).WithNode()
	q.Modify(rowlock.ForUpdate)
	vm, err := q.Only(sys)
	if ent.IsNotFound(err) {
		h.log().Info("task for a VM that is gone: nothing to do", "task", act.kind, "vm", p.VM)
		return nil
	}
	if err != nil {
		return fmt.Errorf("load VM %d: %w", p.VM, err)
	}
	create := act.kind == TypeVMCreate
	if vm.Status != act.pending && !(create && vm.Status == virtualmachine.StatusInitializing) {
		h.log().Info("VM moved on: task superseded", "task", act.kind, "vm", p.VM, "status", vm.Status)
		return nil
	}
	node := vm.Edges.Node
	if node == nil {
		return fmt.Errorf("VM %s was never placed on a node: %w", vm.Name, asynq.SkipRetry)
	}
	a, err := assignmentOf(ctx, c, vm)
	if err != nil {
		return fmt.Errorf("assignment of VM %d: %w", p.VM, err)
	}
	switch {
	case a == nil && create:
		var drive string
		if drive, err = h.prepare(ctx, c, vm); err != nil {
			return err
		}
		a, err = c.Assignment.Create().SetNodeID(node.ID).SetVirtualMachineID(vm.ID).SetConfigDrive(drive).
			SetDesiredState(act.desired).SetGeneration(1).SetStatus(assignment.StatusPending).Save(sys)
	case a == nil:
		return fmt.Errorf("VM %s has no assignment on node %s to %s: %w", vm.Name, node.Name, act.verb, asynq.SkipRetry)
	case a.Generation > p.From || create:
		// Done before (this task ran already): nothing to write.
	default:
		a, err = c.Assignment.UpdateOne(a).SetDesiredState(act.desired).SetGeneration(p.From + 1).
			SetStatus(assignment.StatusPending).SetStatusReason("").Save(sys)
	}
	if err != nil {
		return fmt.Errorf("set assignment of VM %d: %w", p.VM, err)
	}
	reason := fmt.Sprintf("waiting for its node to %s it (assignment generation %d)", act.verb, a.Generation)
	u := c.VirtualMachine.UpdateOne(vm).SetStatusReason(reason)
	if vm.Status != act.pending {
		u.SetStatus(act.pending).SetStatusChangedAt(h.now())
	}
	if err := u.Exec(sys); err != nil {
		return fmt.Errorf("update VM %d: %w", p.VM, err)
	}
	if vm.Status != act.pending {
		if err := auditVM(ctx, c, audit.Worker, "assignVirtualMachine", vm); err != nil {
			return err
		}
	}
	if err := settleService(ctx, c, vm.ID, h.now()); err != nil {
		return err
	}
	h.log().Info("assignment set", "task", act.kind, "vm", vm.ID, "node", node.Name,
		"desired", act.desired, "generation", a.Generation)
	return nil
}

// Failed is the Asynq ErrorHandler of the provisioning tasks: when a task failed for the
// last time (its retries are spent, or it cannot be retried), the VM goes to ERROR with the
// error as its reason, so no request ends silently in Redis's archive.
func (h *Handlers) Failed(ctx context.Context, t *asynq.Task, err error) {
	if t.Type() == TypeServiceReconcile {
		h.serviceFailed(ctx, t, err)
		return
	}
	act, ok := actions[t.Type()]
	if !ok {
		return
	}
	retried, _ := asynq.GetRetryCount(ctx)
	maxRetry, _ := asynq.GetMaxRetry(ctx)
	if retried < maxRetry && !errors.Is(err, asynq.SkipRetry) {
		h.log().Warn("task failed; will retry", "task", t.Type(), "attempt", retried+1, "err", err)
		return
	}
	p, derr := decode(t)
	if derr != nil {
		h.log().Error("task failed for good and names no VM", "task", t.Type(), "err", err)
		return
	}
	msg := strings.TrimSuffix(err.Error(), ": "+asynq.SkipRetry.Error())
	reason := fmt.Sprintf("%s failed after %d attempts: %v", act.verb, retried+1, msg)
	reason = truncate.String(reason, maxReason)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	from := []virtualmachine.Status{act.pending}
	if act.kind == TypeVMCreate {
		from = append(from, virtualmachine.StatusInitializing)
	}
	n, uerr := h.fail(ctx, p.VM, from, reason)
	if uerr != nil {
		h.log().Error("could not record a failed task on its VM", "task", t.Type(), "vm", p.VM, "err", uerr, "task_err", err)
		return
	}
	h.log().Error("task failed for good", "task", t.Type(), "vm", p.VM, "vm_set_to_error", n, "err", err)
}

// fail sets the VM to ERROR with reason if it is in one of the from states, in one
// transaction with its service's status and the audit row (system:worker,
// failVirtualMachine); changed reports whether it was.
func (h *Handlers) fail(ctx context.Context, id int, from []virtualmachine.Status, reason string) (changed bool, err error) {
	_, err = dbtx.Run(ctx, h.Client, func(c *ent.Client) error {
		q := c.VirtualMachine.Query().Where(virtualmachine.ID(id))
		q.Modify(rowlock.ForUpdate)
		before, err := q.Only(system(ctx))
		if ent.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		n, err := c.VirtualMachine.Update().
			Where(virtualmachine.ID(id), virtualmachine.StatusIn(from...)).
			SetStatus(virtualmachine.StatusError).SetStatusReason(reason).SetStatusChangedAt(h.now()).Save(system(ctx))
		if err != nil || n == 0 {
			return err
		}
		if err := settleService(ctx, c, id, h.now()); err != nil {
			return err
		}
		if err := auditVM(ctx, c, audit.Worker, "failVirtualMachine", before); err != nil {
			return err
		}
		changed = true
		return nil
	})
	return changed && err == nil, err
}
