package provision

import (
	"context"
	"fmt"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/metering"
	"github.com/virtflow/virtflow/domain/placement"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/backup"
	"github.com/virtflow/virtflow/ent/snapshot"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/store/truncate"
)

// Snapshots and backups (issue 29): copies of a VM's root disk.
//
// A snapshot is a copy kept in the storage pool of the VM's node (pool volume
// vf-snap-<id>); a backup is a copy on the region's backup target (Region.backupTarget, a
// directory every node of the region mounts at the same path), pool volume vf-backup-<id>
// there. Both are made by the agent of the VM's node through an Assignment of their own, like
// a volume's: the mutation charges the tenant's snapshot or backup quota (placement.ChargeCopy:
// the database decides) at the VM's root disk size, opens the metering interval (GiB-hours),
// and writes the record PENDING with its assignment in the same transaction, so accepted work
// is never lost: an agent that dies mid-copy finds the assignment not APPLIED at its next
// resync and copies again (a copy replaces what an interrupted one left).
//
// States move only on the agent's word: its APPLYING report moves PENDING to CREATING (it
// started copying), APPLIED moves CREATING to AVAILABLE, FAILED to ERROR with its reason.
// revertSnapshot bumps the snapshot assignment's generation with the snapshot REVERTING: the
// agent copies the snapshot back onto the stopped VM's root disk and its APPLIED report makes
// it AVAILABLE again. Deleting sets the assignment ABSENT; the agent's APPLIED report deletes
// the record, gives the quota back and closes the metering interval.
//
// A restore (restoreBackup, cloneVirtualMachine) creates a new VM whose restored_from edge
// names the backup: its node's agent builds its root disk by copying the backup instead of
// overlaying its image, and waits (the VM stays CREATING) while the backup is not AVAILABLE.

// loadVMForCopy reads VM vmID, which the viewer must be allowed to change, with its tenant,
// node, flavor and region (read as the system), and checks it has a root disk to copy.
func loadVMForCopy(ctx context.Context, client *ent.Client, vmID int) (*ent.VirtualMachine, error) {
	if ok, err := client.VirtualMachine.Query().Where(virtualmachine.ID(vmID)).Exist(ctx); err != nil {
		return nil, err
	} else if !ok {
		return nil, apierr.Validation("virtualMachineID", "virtual machine %d not found", vmID)
	}
	if ok, err := authz.MayWrite(ctx, client, "VirtualMachine", vmID); err != nil {
		return nil, err
	} else if !ok {
		return nil, apierr.Validation("virtualMachineID", "virtual machine %d not found", vmID)
	}
	vm, err := client.VirtualMachine.Query().Where(virtualmachine.ID(vmID)).
		WithTenant().WithNode().WithFlavor().WithRegion().WithImage().WithRestoredFrom().Only(system(ctx))
	if err != nil {
		return nil, err
	}
	switch vm.Status {
	case virtualmachine.StatusActive, virtualmachine.StatusStopped:
	default:
		return nil, apierr.Validation("virtualMachineID", "VM %s is %s: its disk can be copied once it is running or stopped", vm.Name, vm.Status)
	}
	if vm.Edges.Node == nil {
		return nil, apierr.Validation("virtualMachineID", "VM %s is not on a node", vm.Name)
	}
	if vm.Edges.Image == nil && vm.Edges.RestoredFrom == nil {
		return nil, apierr.Validation("virtualMachineID", "VM %s has no root disk (it was made without an image)", vm.Name)
	}
	return vm, nil
}

// diskGB is the size charged for a copy of vm's root disk.
func diskGB(vm *ent.VirtualMachine) int64 {
	return max(vm.Edges.Flavor.DiskGB, vm.AllocatedDiskGB, 1)
}

// CreateSnapshot takes a snapshot of VM vmID's root disk as the viewer, in client's
// transaction (see the notes above).
func (s *Service) CreateSnapshot(ctx context.Context, client *ent.Client, vmID int, name string, description *string) (*ent.Snapshot, error) {
	vm, err := loadVMForCopy(ctx, client, vmID)
	if err != nil {
		return nil, err
	}
	gb := diskGB(vm)
	if err := placement.ChargeCopy(ctx, client, placement.SnapshotStorage, vm.Edges.Tenant.ID, vm.Edges.Node.ID, gb); err != nil {
		return nil, err
	}
	c := client.Snapshot.Create().SetName(name).SetTenantID(vm.Edges.Tenant.ID).SetVirtualMachineID(vm.ID).
		SetSizeGB(gb).SetStatusReason("waiting for its node to copy the disk").SetNillableDescription(description)
	snap, err := c.Save(ctx)
	if err != nil {
		return nil, err
	}
	sys := system(ctx)
	if err := client.Snapshot.UpdateOneID(snap.ID).SetNodeID(vm.Edges.Node.ID).Exec(sys); err != nil {
		return nil, err
	}
	if err := client.Assignment.Create().SetNodeID(vm.Edges.Node.ID).SetSnapshotID(snap.ID).
		SetDesiredState(assignment.DesiredStateRunning).SetStatus(assignment.StatusPending).
		SetStatusReason("copy the VM's root disk into the node's storage pool").Exec(sys); err != nil {
		return nil, fmt.Errorf("assign snapshot to its node: %w", err)
	}
	if err := metering.Open(ctx, client, s.now(), metering.Interval{Kind: metering.KindSnapshot, ResourceID: snap.ID,
		Name: snap.Name, TenantID: vm.Edges.Tenant.ID, RegionID: vm.Edges.Region.ID, Quantity: gb}); err != nil {
		return nil, err
	}
	return client.Snapshot.Get(ctx, snap.ID)
}

// loadSnapshot reads snapshot id, which the viewer must be able to change, with its tenant,
// node and VM (with its node), as the system.
func loadSnapshot(ctx context.Context, client *ent.Client, id int) (*ent.Snapshot, error) {
	if ok, err := client.Snapshot.Query().Where(snapshot.ID(id)).Exist(ctx); err != nil {
		return nil, err
	} else if !ok {
		return nil, apierr.NotFound("snapshot %d not found", id)
	}
	if ok, err := authz.MayWrite(ctx, client, "Snapshot", id); err != nil {
		return nil, err
	} else if !ok {
		return nil, apierr.NotFound("snapshot %d not found", id)
	}
	return client.Snapshot.Query().Where(snapshot.ID(id)).WithTenant().WithNode().
		WithVirtualMachine(func(q *ent.VirtualMachineQuery) { q.WithNode() }).Only(system(ctx))
}

// RevertSnapshot copies AVAILABLE snapshot id back onto its STOPPED VM's root disk, as the
// viewer in client's transaction: REVERTING until the node's agent did it.
func (s *Service) RevertSnapshot(ctx context.Context, client *ent.Client, id int) (*ent.Snapshot, error) {
	snap, err := loadSnapshot(ctx, client, id)
	if err != nil {
		return nil, err
	}
	vm := snap.Edges.VirtualMachine
	switch {
	case snap.Status == snapshot.StatusReverting:
		return snap, nil
	case snap.Status != snapshot.StatusAvailable:
		return nil, apierr.Validation("id", "snapshot %s is %s: only an AVAILABLE snapshot can be reverted to", snap.Name, snap.Status)
	case vm == nil:
		return nil, apierr.Validation("id", "snapshot %s: its VM was deleted", snap.Name)
	case vm.Status != virtualmachine.StatusStopped:
		return nil, apierr.Validation("id", "VM %s is %s: stop it before reverting it to a snapshot", vm.Name, vm.Status)
	case vm.Edges.Node == nil || snap.Edges.Node == nil || vm.Edges.Node.ID != snap.Edges.Node.ID:
		return nil, apierr.Validation("id", "VM %s moved to another node since snapshot %s was taken: the snapshot stays on the node it was taken on", vm.Name, snap.Name)
	}
	n, err := client.Snapshot.Update().Where(snapshot.ID(snap.ID), snapshot.StatusEQ(snapshot.StatusAvailable)).
		SetStatus(snapshot.StatusReverting).SetStatusReason("waiting for its node to copy it back onto the VM's disk").Save(ctx)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, apierr.Conflict("snapshot %s changed meanwhile; try again", snap.Name)
	}
	if _, err := client.Assignment.Update().Where(assignment.HasSnapshotWith(snapshot.ID(snap.ID))).
		SetStatus(assignment.StatusPending).AddGeneration(1).SetStatusReason("revert the VM's root disk to the snapshot").
		Save(system(ctx)); err != nil {
		return nil, fmt.Errorf("assign revert of snapshot %s: %w", snap.Name, err)
	}
	return client.Snapshot.Get(ctx, snap.ID)
}

// DeleteSnapshot deletes snapshot id as the viewer in client's transaction: DELETING until
// its node's agent deleted the copy (then the row goes), at once when it has none.
func (s *Service) DeleteSnapshot(ctx context.Context, client *ent.Client, id int) error {
	snap, err := loadSnapshot(ctx, client, id)
	if err != nil {
		return err
	}
	switch snap.Status {
	case snapshot.StatusDeleting:
		return nil
	case snapshot.StatusReverting:
		return apierr.Validation("id", "snapshot %s is being reverted to: delete it once the revert is done", snap.Name)
	}
	if err := client.Snapshot.UpdateOneID(snap.ID).SetStatus(snapshot.StatusDeleting).
		SetStatusReason("waiting for its node to delete the copy").Exec(ctx); err != nil {
		return err
	}
	n, err := client.Assignment.Update().Where(assignment.HasSnapshotWith(snapshot.ID(snap.ID))).
		SetDesiredState(assignment.DesiredStateAbsent).SetStatus(assignment.StatusPending).AddGeneration(1).
		SetStatusReason("delete the snapshot's copy").Save(system(ctx))
	if err != nil {
		return fmt.Errorf("retire snapshot %s on its node: %w", snap.Name, err)
	}
	if n == 0 {
		return s.dropSnapshot(ctx, client, snap)
	}
	return nil
}

// dropSnapshot deletes snap's row, gives back its quota and closes its metering interval.
func (s *Service) dropSnapshot(ctx context.Context, client *ent.Client, snap *ent.Snapshot) error {
	if snap.Edges.Node != nil {
		if err := placement.ReleaseCopy(ctx, client, placement.SnapshotStorage, snap.Edges.Tenant.ID, snap.Edges.Node.ID, snap.SizeGB); err != nil {
			return err
		}
	}
	if err := metering.Close(ctx, client, s.now(), metering.KindSnapshot, snap.ID); err != nil {
		return err
	}
	return client.Snapshot.DeleteOneID(snap.ID).Exec(system(ctx))
}

// applySnapshotReport records an agent's report on snapshot snap's assignment a.
func (s *Service) applySnapshotReport(ctx context.Context, client *ent.Client, a *ent.Assignment, snap *ent.Snapshot, r Report) (*ent.Assignment, error) {
	sys := system(ctx)
	out, err := client.Assignment.Get(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	u := client.Snapshot.UpdateOneID(snap.ID)
	switch {
	case a.DesiredState == assignment.DesiredStateAbsent && r.Status == assignment.StatusApplied:
		if err := client.Assignment.DeleteOneID(a.ID).Exec(sys); err != nil {
			return nil, err
		}
		return out, s.dropSnapshot(ctx, client, snap)
	case r.Status == assignment.StatusApplying && snap.Status == snapshot.StatusPending:
		u.SetStatus(snapshot.StatusCreating).SetStatusReason("its node is copying the VM's disk")
	case r.Status == assignment.StatusApplied && (snap.Status == snapshot.StatusPending || snap.Status == snapshot.StatusCreating):
		u.SetStatus(snapshot.StatusAvailable).SetStatusReason("taken")
	case r.Status == assignment.StatusApplied && snap.Status == snapshot.StatusReverting:
		u.SetStatus(snapshot.StatusAvailable).AddReverts(1).SetStatusReason("the VM's root disk was reverted to it")
	case r.Status == assignment.StatusFailed:
		u.SetStatus(snapshot.StatusError).
			SetStatusReason(truncate.String("its node could not do it: "+orUnknown(deref(r.Reason)), maxReason))
	default:
		return out, nil
	}
	return out, u.Exec(sys)
}

// CreateBackup backs VM vmID's root disk up to its region's backup target as the viewer,
// in client's transaction (see the notes above); scheduled marks a backup the VM's schedule
// made.
func (s *Service) CreateBackup(ctx context.Context, client *ent.Client, vmID int, name string, description *string, scheduled bool) (*ent.Backup, error) {
	vm, err := loadVMForCopy(ctx, client, vmID)
	if err != nil {
		return nil, err
	}
	target := vm.Edges.Region.BackupTarget
	if target == "" {
		return nil, apierr.Validation("virtualMachineID", "region %s has no backup target: an operator sets the region's backupTarget", vm.Edges.Region.Name)
	}
	gb := diskGB(vm)
	if err := placement.ChargeCopy(ctx, client, placement.BackupStorage, vm.Edges.Tenant.ID, vm.Edges.Node.ID, gb); err != nil {
		return nil, err
	}
	c := client.Backup.Create().SetName(name).SetTenantID(vm.Edges.Tenant.ID).SetRegionID(vm.Edges.Region.ID).
		SetVirtualMachineID(vm.ID).SetSizeGB(gb).SetLocation(target).SetScheduled(scheduled).
		SetFlavorName(vm.Edges.Flavor.Name).SetStatusReason("waiting for the VM's node to copy the disk").
		SetNillableDescription(description)
	if vm.Edges.Image != nil {
		c.SetImageName(vm.Edges.Image.Name)
	}
	sys := system(ctx)
	// Region and the copy's fields are the system's: the viewer decided only what to copy.
	b, err := c.Save(sys)
	if err != nil {
		return nil, err
	}
	if err := client.Backup.UpdateOneID(b.ID).SetNodeID(vm.Edges.Node.ID).Exec(sys); err != nil {
		return nil, err
	}
	if err := client.Assignment.Create().SetNodeID(vm.Edges.Node.ID).SetBackupID(b.ID).
		SetDesiredState(assignment.DesiredStateRunning).SetStatus(assignment.StatusPending).
		SetStatusReason("copy the VM's root disk to the backup target").Exec(sys); err != nil {
		return nil, fmt.Errorf("assign backup to the VM's node: %w", err)
	}
	if err := metering.Open(ctx, client, s.now(), metering.Interval{Kind: metering.KindBackup, ResourceID: b.ID,
		Name: b.Name, TenantID: vm.Edges.Tenant.ID, RegionID: vm.Edges.Region.ID, Quantity: gb}); err != nil {
		return nil, err
	}
	return client.Backup.Get(ctx, b.ID)
}

// loadBackup reads backup id, which the viewer must be able to change, with its tenant,
// region and node, as the system.
func loadBackup(ctx context.Context, client *ent.Client, id int) (*ent.Backup, error) {
	if ok, err := client.Backup.Query().Where(backup.ID(id)).Exist(ctx); err != nil {
		return nil, err
	} else if !ok {
		return nil, apierr.NotFound("backup %d not found", id)
	}
	if ok, err := authz.MayWrite(ctx, client, "Backup", id); err != nil {
		return nil, err
	} else if !ok {
		return nil, apierr.NotFound("backup %d not found", id)
	}
	return client.Backup.Query().Where(backup.ID(id)).WithTenant().WithNode().WithRegion().Only(system(ctx))
}

// DeleteBackup deletes backup id as the viewer in client's transaction: DELETING until the
// agent of the node that made it deleted the copy from the backup target.
func (s *Service) DeleteBackup(ctx context.Context, client *ent.Client, id int) error {
	b, err := loadBackup(ctx, client, id)
	if err != nil {
		return err
	}
	if b.Status == backup.StatusDeleting {
		return nil
	}
	if err := client.Backup.UpdateOneID(b.ID).SetStatus(backup.StatusDeleting).
		SetStatusReason("waiting for a node to delete the copy").Exec(ctx); err != nil {
		return err
	}
	n, err := client.Assignment.Update().Where(assignment.HasBackupWith(backup.ID(b.ID))).
		SetDesiredState(assignment.DesiredStateAbsent).SetStatus(assignment.StatusPending).AddGeneration(1).
		SetStatusReason("delete the backup's copy").Save(system(ctx))
	if err != nil {
		return fmt.Errorf("retire backup %s: %w", b.Name, err)
	}
	if n == 0 {
		return s.dropBackup(ctx, client, b)
	}
	return nil
}

// dropBackup deletes b's row, gives back its quota and closes its metering interval.
func (s *Service) dropBackup(ctx context.Context, client *ent.Client, b *ent.Backup) error {
	if b.Edges.Node != nil {
		if err := placement.ReleaseCopy(ctx, client, placement.BackupStorage, b.Edges.Tenant.ID, b.Edges.Node.ID, b.SizeGB); err != nil {
			return err
		}
	}
	if err := metering.Close(ctx, client, s.now(), metering.KindBackup, b.ID); err != nil {
		return err
	}
	sys := system(ctx)
	if err := client.VirtualMachine.Update().Where(virtualmachine.HasRestoredFromWith(backup.ID(b.ID))).
		ClearRestoredFrom().Exec(sys); err != nil {
		return err
	}
	return client.Backup.DeleteOneID(b.ID).Exec(sys)
}

// applyBackupReport records an agent's report on backup b's assignment a. A backup that
// became AVAILABLE wakes the agents of the VMs waiting to be restored from it.
func (s *Service) applyBackupReport(ctx context.Context, client *ent.Client, a *ent.Assignment, b *ent.Backup, r Report) (*ent.Assignment, error) {
	sys := system(ctx)
	out, err := client.Assignment.Get(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	u := client.Backup.UpdateOneID(b.ID)
	switch {
	case a.DesiredState == assignment.DesiredStateAbsent && r.Status == assignment.StatusApplied:
		if err := client.Assignment.DeleteOneID(a.ID).Exec(sys); err != nil {
			return nil, err
		}
		return out, s.dropBackup(ctx, client, b)
	case r.Status == assignment.StatusApplying && b.Status == backup.StatusPending:
		u.SetStatus(backup.StatusCreating).SetStatusReason("the VM's node is copying its disk to the backup target")
	case r.Status == assignment.StatusApplied && (b.Status == backup.StatusPending || b.Status == backup.StatusCreating):
		u.SetStatus(backup.StatusAvailable).SetStatusReason("stored on the backup target")
		if _, err := client.Assignment.Update().
			Where(assignment.HasVirtualMachineWith(virtualmachine.HasRestoredFromWith(backup.ID(b.ID))),
				assignment.DesiredStateNEQ(assignment.DesiredStateAbsent), assignment.StatusNEQ(assignment.StatusApplied)).
			SetStatus(assignment.StatusPending).SetStatusReason("the backup to restore from is available").Save(sys); err != nil {
			return nil, fmt.Errorf("wake VMs restored from backup %s: %w", b.Name, err)
		}
	case r.Status == assignment.StatusFailed:
		u.SetStatus(backup.StatusError).
			SetStatusReason(truncate.String("its node could not do it: "+orUnknown(deref(r.Reason)), maxReason))
	default:
		return out, nil
	}
	return out, u.Exec(sys)
}

// RestoreBackup creates a new VM from input (placed like createVirtualMachine) whose root
// disk is a copy of backup id, as the viewer in client's transaction. The backup must be
// AVAILABLE (or, for a clone, on its way: waitOK), the VM in its tenant and region, and the
// flavor's disk must hold it.
func (s *Service) RestoreBackup(ctx context.Context, client *ent.Client, id int, input ent.CreateVirtualMachineInput) (*ent.VirtualMachine, error) {
	return s.restore(ctx, client, id, input, false)
}

func (s *Service) restore(ctx context.Context, client *ent.Client, id int, input ent.CreateVirtualMachineInput, waitOK bool) (*ent.VirtualMachine, error) {
	b, err := loadBackup(ctx, client, id)
	if err != nil {
		return nil, err
	}
	switch {
	case b.Status == backup.StatusAvailable:
	case waitOK && (b.Status == backup.StatusPending || b.Status == backup.StatusCreating):
	default:
		return nil, apierr.Validation("id", "backup %s is %s: only an AVAILABLE backup can be restored", b.Name, b.Status)
	}
	if input.TenantID != b.Edges.Tenant.ID {
		return nil, apierr.Validation("tenantID", "backup %s belongs to another tenant", b.Name)
	}
	if input.RegionID != b.Edges.Region.ID {
		return nil, apierr.Validation("regionID", "backup %s is in region %s: restore it there", b.Name, b.Edges.Region.Name)
	}
	f, err := client.Flavor.Get(ctx, input.FlavorID)
	if err != nil {
		return nil, apierr.Validation("flavorID", "flavor %d not found", input.FlavorID)
	}
	if f.DiskGB < b.SizeGB {
		return nil, apierr.Validation("flavorID", "flavor %s has a %d GiB disk; backup %s needs %d GiB", f.Name, f.DiskGB, b.Name, b.SizeGB)
	}
	vm, err := s.CreateVM(ctx, client, input)
	if err != nil {
		return nil, err
	}
	if err := client.VirtualMachine.UpdateOneID(vm.ID).SetRestoredFromID(b.ID).Exec(system(ctx)); err != nil {
		return nil, fmt.Errorf("restore VM %s from backup %s: %w", vm.Name, b.Name, err)
	}
	return client.VirtualMachine.Get(ctx, vm.ID)
}

// CloneVM clones VM id: a backup of its root disk named clone-<input's name>, and a new VM
// of input restored from it, which waits until the backup is AVAILABLE.
func (s *Service) CloneVM(ctx context.Context, client *ent.Client, id int, input ent.CreateVirtualMachineInput) (*ent.VirtualMachine, error) {
	desc := "made by cloneVirtualMachine"
	b, err := s.CreateBackup(ctx, client, id, truncate.String("clone-"+input.Name, 128), &desc, false)
	if err != nil {
		return nil, err
	}
	return s.restore(ctx, client, b.ID, input, true)
}

// MayReadBackupPath reports whether the viewer in ctx may read where backups are written on
// the nodes (Backup.location, Region.backupTarget): an operator's directory, which says
// nothing a tenant needs and describes the platform's storage. Readable by whoever may edit
// regions (operators and admins, who set backupTarget), by the agent of a node (it copies
// and restores the backups the row filter shows it) and by the system; for tenant members,
// tenant admins and platform viewers the fields are null, as a cluster node's userData is.
func MayReadBackupPath(ctx context.Context) bool {
	v := authz.FromContext(ctx)
	return v.IsSystem() || v.Can("Region", authz.ActWrite) || len(v.Domains("node", "Backup", authz.ActRead)) > 0
}
