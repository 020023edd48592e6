package provision

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/domain/audit"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/backup"
	"github.com/virtflow/virtflow/ent/predicate"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// BackupScheduler takes the scheduled backups of VMs (VirtualMachine.backupIntervalHours)
// and keeps backupRetain of them per VM, deleting the oldest beyond. It runs in every
// worker beside the Reconciler: a loop, because the work is due by the clock, not asked for.
// Of several workers, one takes each backup: the claim is a conditional UPDATE of the VM's
// last_scheduled_backup_at (the database decides) in the backup's own transaction.
type BackupScheduler struct {
	Client  *ent.Client
	Service *Service
	// Interval is how often VMs are looked at (1 minute).
	Interval time.Duration
	Log      *slog.Logger
}

// Run takes the due backups every Interval until ctx is done.
func (b *BackupScheduler) Run(ctx context.Context) {
	every := b.Interval
	if every <= 0 {
		every = time.Minute
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if n, err := b.Once(ctx); err != nil && ctx.Err() == nil {
			b.log().Warn("scheduled backups", "err", err)
		} else if n > 0 {
			b.log().Info("scheduled backups taken", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (b *BackupScheduler) log() *slog.Logger {
	if b.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return b.Log
}

// due selects the VMs whose scheduled backup is due at now.
func due(now time.Time) predicate.VirtualMachine {
	return func(s *sql.Selector) {
		s.Where(sql.And(sql.GT(s.C(virtualmachine.FieldBackupIntervalHours), 0),
			sql.Or(sql.IsNull(s.C(virtualmachine.FieldLastScheduledBackupAt)),
				sql.P(func(bl *sql.Builder) {
					bl.Ident(s.C(virtualmachine.FieldLastScheduledBackupAt)).WriteString(" + make_interval(hours => ").
						Ident(s.C(virtualmachine.FieldBackupIntervalHours)).WriteString("::int) <= ").Arg(now)
				}))))
	}
}

// Once takes the backups due now, each in a transaction of its own, and returns how many it
// took. A VM whose backup is refused (no backup target, quota full, not running or stopped)
// is skipped until its next interval, with an audit row saying why.
func (b *BackupScheduler) Once(ctx context.Context) (int, error) {
	sys := audit.BackupSchedule.Context(ctx)
	now := b.Service.now()
	ids, err := b.Client.VirtualMachine.Query().Where(due(now),
		virtualmachine.StatusIn(virtualmachine.StatusActive, virtualmachine.StatusStopped)).IDs(sys)
	if err != nil {
		return 0, fmt.Errorf("VMs due for a backup: %w", err)
	}
	n := 0
	for _, id := range ids {
		ok, err := b.one(sys, id, now)
		if err != nil {
			b.log().Warn("scheduled backup", "vm", id, "err", err)
		}
		if ok {
			n++
		}
	}
	return n, nil
}

// one claims VM id's due backup and takes it, pruning the oldest scheduled ones.
func (b *BackupScheduler) one(ctx context.Context, id int, now time.Time) (bool, error) {
	tx, err := b.Client.Tx(ctx)
	if err != nil {
		return false, err
	}
	defer func() { _ = tx.Rollback() }()
	c := tx.Client()
	before, err := c.VirtualMachine.Get(ctx, id)
	if err != nil {
		return false, err
	}
	claimed, err := c.VirtualMachine.Update().Where(virtualmachine.ID(id), due(now)).
		SetLastScheduledBackupAt(now).Save(ctx)
	if err != nil || claimed == 0 {
		return false, err // another worker took it
	}
	vm, err := c.VirtualMachine.Get(ctx, id)
	if err != nil {
		return false, err
	}
	name := fmt.Sprintf("%s-%s", vm.Name, now.UTC().Format("20060102-1504"))
	if len(name) > 128 {
		name = name[len(name)-128:]
	}
	bk, err := b.Service.CreateBackup(ctx, c, id, name, nil, true)
	if err != nil {
		// Skipped until the next interval (the claim commits); said in the VM's timeline.
		if werr := audit.Write(ctx, c, audit.Entry{Action: "skipScheduledBackup", Subject: vm, Before: before,
			After:  map[string]any{"virtualMachine": vm, "reason": err.Error()},
			System: audit.BackupSchedule}); werr != nil {
			return false, werr
		}
		return false, tx.Commit()
	}
	// The VM's timeline says when its schedule took which backup.
	if err := audit.Write(ctx, c, audit.Entry{Action: "scheduleBackup", Subject: vm, Before: before,
		After: map[string]any{"virtualMachine": vm, "backup": bk}, System: audit.BackupSchedule}); err != nil {
		return false, err
	}
	old, err := c.Backup.Query().Where(backup.HasVirtualMachineWith(virtualmachine.ID(id)), backup.Scheduled(true),
		backup.StatusNEQ(backup.StatusDeleting)).Order(ent.Desc(backup.FieldCreatedAt), ent.Desc(backup.FieldID)).
		Offset(vm.BackupRetain).IDs(ctx)
	if err != nil {
		return false, err
	}
	for _, o := range old {
		if err := b.Service.DeleteBackup(ctx, c, o); err != nil {
			return false, fmt.Errorf("prune backup %d: %w", o, err)
		}
	}
	return true, tx.Commit()
}
