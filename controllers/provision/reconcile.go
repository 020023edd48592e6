package provision

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/virtflow/virtflow/domain/audit"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/outboxtask"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/store/dbtx"
)

// ReconcileConfig tunes the Reconciler; zero fields take their defaults.
type ReconcileConfig struct {
	// Deadline is how long a VM may stay in a transitional state (10 min).
	Deadline time.Duration
	// Interval is how often the loop looks (1 min).
	Interval time.Duration
	// MaxRequeue bounds how often a vm:create that no worker took is enqueued again (3).
	MaxRequeue int
}

// Reconciler finds VMs stuck in a transitional state and retries or fails them. Any number
// may run: every change it makes is conditional on the VM not having moved meanwhile.
type Reconciler struct {
	Client *ent.Client
	Config ReconcileConfig
	Log    *slog.Logger
	// Clock says when a VM's deadline has passed and dates the changes (default time.Now):
	// internal/app passes the provisioning Service's (Service.Clock), tests their own.
	Clock func() time.Time
}

// transitional are the states a VM must leave by the deadline.
var transitional = []virtualmachine.Status{virtualmachine.StatusInitializing, virtualmachine.StatusCreating,
	virtualmachine.StatusStarting, virtualmachine.StatusStopping, virtualmachine.StatusRebooting, virtualmachine.StatusDeleting}

func (r *Reconciler) config() ReconcileConfig {
	c := r.Config
	if c.Deadline <= 0 {
		c.Deadline = 10 * time.Minute
	}
	if c.Interval <= 0 {
		c.Interval = time.Minute
	}
	if c.MaxRequeue <= 0 {
		c.MaxRequeue = 3
	}
	return c
}

// Run reconciles every Interval until ctx is done.
func (r *Reconciler) Run(ctx context.Context) {
	t := time.NewTicker(r.config().Interval)
	defer t.Stop()
	for {
		if requeued, failed, err := r.Once(ctx); err != nil && ctx.Err() == nil {
			r.log().Warn("reconcile", "err", err)
		} else if requeued+failed > 0 {
			r.log().Info("reconciled stuck VMs", "requeued", requeued, "failed", failed)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (r *Reconciler) now() time.Time {
	if r.Clock == nil {
		return time.Now()
	}
	return r.Clock()
}

func (r *Reconciler) log() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Log
}

// Once handles the VMs stuck now: an INITIALIZING VM with no assignment gets its vm:create
// again (up to MaxRequeue times), every other one goes to ERROR with a reason.
func (r *Reconciler) Once(ctx context.Context) (requeued, failed int, err error) {
	cfg := r.config()
	sys := system(ctx)
	stuck, err := r.Client.VirtualMachine.Query().Where(virtualmachine.StatusIn(transitional...),
		virtualmachine.StatusChangedAtLT(r.now().Add(-cfg.Deadline))).
		WithNode().WithAssignments().Limit(1000).All(sys)
	if err != nil {
		return 0, 0, fmt.Errorf("find stuck VMs: %w", err)
	}
	for _, vm := range stuck {
		again, err := r.handle(ctx, cfg, vm)
		if err != nil {
			return requeued, failed, fmt.Errorf("VM %d: %w", vm.ID, err)
		}
		if again {
			requeued++
		} else {
			failed++
		}
	}
	return requeued, failed, nil
}

// handle retries or fails one stuck VM in a transaction of its own, audited (system:reconcile:
// requeueVirtualMachine, failVirtualMachine); again reports a retry.
func (r *Reconciler) handle(ctx context.Context, cfg ReconcileConfig, vm *ent.VirtualMachine) (again bool, err error) {
	_, err = dbtx.Run(ctx, r.Client, func(c *ent.Client) error {
		again, err = retryOrFail(ctx, c, cfg, vm, r.now())
		return err
	})
	return again && err == nil, err
}

// retryOrFail enqueues vm:create again for a VM no worker created yet (at most
// cfg.MaxRequeue times), else marks the VM ERROR, through c, dating the change now.
func retryOrFail(ctx context.Context, c *ent.Client, cfg ReconcileConfig, vm *ent.VirtualMachine, now time.Time) (bool, error) {
	sys := system(ctx)
	update := c.VirtualMachine.Update().Where(virtualmachine.ID(vm.ID), virtualmachine.StatusEQ(vm.Status),
		virtualmachine.StatusChangedAt(vm.StatusChangedAt)).SetStatusChangedAt(now)
	if vm.Status == virtualmachine.StatusInitializing && len(vm.Edges.Assignments) == 0 && vm.Edges.Node != nil {
		for k := 1; k <= cfg.MaxRequeue; k++ {
			key := fmt.Sprintf("%s:%d:requeue:%d", TypeVMCreate, vm.ID, k)
			taken, err := c.OutboxTask.Query().Where(outboxtask.DedupKey(key)).Exist(sys)
			if err != nil {
				return false, err
			}
			if taken {
				continue
			}
			n, err := update.SetStatusReason(fmt.Sprintf("no worker created it within %s: creation enqueued again (%d of %d)",
				cfg.Deadline, k, cfg.MaxRequeue)).Save(sys)
			if err != nil || n == 0 {
				return false, err
			}
			if err := enqueue(ctx, c, TypeVMCreate, vm.ID, 0, key); err != nil {
				return false, err
			}
			if err := auditVM(ctx, c, audit.Reconcile, "requeueVirtualMachine", vm); err != nil {
				return false, err
			}
			return true, nil
		}
	}
	reason := fmt.Sprintf("stuck %s for more than %s", vm.Status, cfg.Deadline)
	if len(vm.Edges.Assignments) > 0 {
		a := vm.Edges.Assignments[0]
		reason += fmt.Sprintf(": its node did not report (assignment generation %d wants %s, is %s)",
			a.Generation, a.DesiredState, a.Status)
	} else {
		reason += ": no worker took the request"
	}
	n, err := update.SetStatus(virtualmachine.StatusError).SetStatusReason(reason).Save(sys)
	if err != nil {
		return false, err
	}
	if err := settleService(ctx, c, vm.ID, now); err != nil {
		return false, err
	}
	if n > 0 {
		if err := auditVM(ctx, c, audit.Reconcile, "failVirtualMachine", vm); err != nil {
			return false, err
		}
	}
	return false, nil
}

// auditVM writes the audit row of actor's change to a VM through c, the transaction of the
// change: before is the VM as it was, the after image is read back. An empty actor is the
// viewer of ctx (a node agent reporting).
func auditVM(ctx context.Context, c *ent.Client, actor audit.SystemActor, action string, before *ent.VirtualMachine) error {
	after, err := c.VirtualMachine.Get(system(ctx), before.ID)
	if err != nil {
		return fmt.Errorf("read VM %d back: %w", before.ID, err)
	}
	return audit.Write(ctx, c, audit.Entry{System: actor, Action: action, Subject: after, Before: before, After: after})
}
