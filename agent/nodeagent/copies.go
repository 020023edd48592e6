package nodeagent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"

	"github.com/virtflow/virtflow/agent/hypervisor"
)

// Snapshots and backups on the node (see controllers/provision/copies.go for their life on the server).
// A snapshot is pool volume vf-snap-<id> beside the VM's root disk in the node's pool; a
// backup is volume vf-backup-<id> of a second directory pool the agent keeps over the
// region's backup target (the directory the backup's location names, mounted at the same
// path on every node of the region). Both are full copies of the root disk
// (Storage.CopyVolume: qemu-img convert through libvirt, backing chain included), taken
// while a running domain is paused so that the copy is consistent, and made again from the
// start when an agent died mid-copy (the assignment is not APPLIED yet). A revert copies the
// snapshot back onto the root disk of the stopped domain; a restored VM's root disk is a copy
// of its backup, made while its domain is not defined yet.

// snapshotName is the pool volume of snapshot id.
func snapshotName(id string) string { return "vf-snap-" + id }

// backupName is the volume of backup id in its backup pool.
func backupName(id string) string { return "vf-backup-" + id }

// backupPool is the pool the agent keeps over backup target directory dir: named for the
// directory, so that two targets never share a pool.
func (ag *Agent) backupPool(ctx context.Context, dir string) (string, error) {
	sum := sha256.Sum256([]byte(dir))
	name := "vf-backups-" + hex.EncodeToString(sum[:6])
	if err := ag.hv.EnsurePool(ctx, hypervisor.PoolSpec{Name: name, Path: dir}); err != nil {
		return "", fmt.Errorf("backup target %s: %w", dir, err)
	}
	return name, nil
}

// errWaiting is an assignment that cannot go on until something else is done (a restore
// whose backup is still being copied): reported APPLYING with the reason, not FAILED.
var errWaiting = errors.New("waiting")

// realizeCopy realizes the assignment of a snapshot or a backup (a.Snapshot or a.Backup)
// and reports the outcome. An assignment APPLIED at its generation is done.
func (ag *Agent) realizeCopy(ctx context.Context, a Assignment) {
	if a.Status == AssignmentStatusApplied {
		return
	}
	obs, err := ag.applyCopy(ctx, a)
	if ctx.Err() != nil {
		return // shutting down: the next start picks this up again
	}
	if err != nil {
		ag.log.Warn("copy assignment failed", "assignment", a.Id, "err", err)
		ag.report(ctx, a, AssignmentStatusFailed, "unknown", err.Error(), true)
		return
	}
	ag.log.Info("copy assignment applied", "assignment", a.Id, "observed", obs)
	ag.report(ctx, a, AssignmentStatusApplied, obs, "", true)
}

// applyCopy does what a snapshot's or backup's assignment asks; it returns the observed
// state to report.
func (ag *Agent) applyCopy(ctx context.Context, a Assignment) (string, error) {
	if err := ag.images.ensurePool(ctx); err != nil {
		return "", err
	}
	pool := ag.images.pool.Name
	var dstPool, dst string
	var vm *int64
	revert := false
	switch {
	case a.Snapshot != nil:
		dstPool, dst = pool, snapshotName(a.Snapshot.Id)
		revert = a.Snapshot.Status == SnapshotStatusReverting
		if v := a.Snapshot.VirtualMachine; v != nil {
			id, err := strconv.ParseInt(v.Id, 10, 64)
			if err != nil {
				return "", fmt.Errorf("snapshot %s: VM id %q: %w", a.Snapshot.Id, v.Id, err)
			}
			vm = &id
		}
	case a.Backup != nil:
		if a.Backup.Location == nil || *a.Backup.Location == "" {
			return "", fmt.Errorf("backup %s has no location", a.Backup.Id)
		}
		p, err := ag.backupPool(ctx, *a.Backup.Location)
		if err != nil {
			return "", err
		}
		dstPool, dst = p, backupName(a.Backup.Id)
		if v := a.Backup.VirtualMachine; v != nil {
			id, err := strconv.ParseInt(v.Id, 10, 64)
			if err != nil {
				return "", fmt.Errorf("backup %s: VM id %q: %w", a.Backup.Id, v.Id, err)
			}
			vm = &id
		}
	default:
		return "", fmt.Errorf("assignment %s is neither a snapshot's nor a backup's", a.Id)
	}
	if a.DesiredState == AssignmentDesiredStateAbsent {
		return observedAbsent, ag.hv.DeleteVolume(ctx, dstPool, dst)
	}
	if vm == nil {
		return "", fmt.Errorf("its VM was deleted: there is no disk to copy")
	}
	name := hypervisor.DomainName(*vm)
	root := rootVolumeName(*vm)
	// Said before the copy, which takes a while: the record moves to CREATING.
	ag.report(ctx, a, AssignmentStatusApplying, "copying", "", true)
	if revert {
		st, err := ag.hv.State(ctx, name)
		if err != nil && !errors.Is(err, hypervisor.ErrNotFound) {
			return "", err
		}
		if err == nil && st.Active() {
			return "", fmt.Errorf("VM %d is %s: a disk is reverted only while its VM is stopped", *vm, st)
		}
		if _, err := ag.hv.CopyVolume(ctx, dstPool, dst, pool, root); err != nil {
			return "", fmt.Errorf("revert root disk: %w", err)
		}
		return "reverted", nil
	}
	st, err := ag.hv.State(ctx, name)
	if err != nil && !errors.Is(err, hypervisor.ErrNotFound) {
		return "", err
	}
	if err == nil && st == hypervisor.StateRunning {
		// Paused for the copy: a running guest would change the disk under it.
		if err := ag.hv.Suspend(ctx, name); err != nil {
			return "", err
		}
		defer func() {
			if err := ag.hv.Start(context.WithoutCancel(ctx), name); err != nil {
				ag.log.Warn("cannot resume a domain paused for a copy", "domain", name, "err", err)
			}
		}()
	}
	if _, err := ag.hv.CopyVolume(ctx, pool, root, dstPool, dst); err != nil {
		return "", fmt.Errorf("copy root disk: %w", err)
	}
	return observedPresent, nil
}

// restoredDisks makes the root disk of a restored VM (vm.RestoredFrom) a copy of its
// backup: copied again while the domain is not defined (fresh), so that a copy cut short
// is made again, and grown to the flavor's disk. It is errWaiting while the backup is not
// AVAILABLE yet (a clone's backup still being made).
func (ag *Agent) restoredDisks(ctx context.Context, vmID int64, vm *VirtualMachine, fresh bool) ([]hypervisor.Disk, error) {
	b := vm.RestoredFrom
	if b.Status != BackupStatusAvailable {
		return nil, fmt.Errorf("backup %s to restore from is %s: %w", b.Id, b.Status, errWaiting)
	}
	if b.Location == nil || *b.Location == "" {
		return nil, fmt.Errorf("backup %s has no location", b.Id)
	}
	if err := ag.images.ensurePool(ctx); err != nil {
		return nil, err
	}
	pool := ag.images.pool.Name
	bpool, err := ag.backupPool(ctx, *b.Location)
	if err != nil {
		return nil, err
	}
	root := rootVolumeName(vmID)
	v, err := ag.hv.Volume(ctx, pool, root)
	if fresh || errors.Is(err, hypervisor.ErrNotFound) {
		if v, err = ag.hv.CopyVolume(ctx, bpool, backupName(b.Id), pool, root); err != nil {
			return nil, fmt.Errorf("restore root disk from backup %s: %w", b.Id, err)
		}
	} else if err != nil {
		return nil, err
	}
	if size := vm.Flavor.DiskGB << 30; v.CapacityBytes < size {
		if v, err = ag.hv.GrowVolume(ctx, pool, root, size); err != nil {
			return nil, fmt.Errorf("grow restored root disk to %d GiB: %w", vm.Flavor.DiskGB, err)
		}
	}
	return []hypervisor.Disk{{Path: v.Path, Format: "qcow2"}}, nil
}
