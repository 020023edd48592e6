package provision

import (
	"context"
	"fmt"
	"slices"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/metering"
	"github.com/virtflow/virtflow/domain/placement"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/region"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/ent/volume"
	"github.com/virtflow/virtflow/store/truncate"
)

// Volumes (SPEC.md §5, seeds 001 and 003: VolumeResource on the node storage HDD/SSD/NVMe).
//
// A volume is a tenant's block device kept in a storage pool of one node. It lives on the node
// of the first VM it is attached to: createVolume alone leaves it PENDING (nothing exists yet,
// nothing is charged), and the first attach charges the node's disk and the tenant's storage
// quota (placement.ChargeVolume) and gives it an Assignment of its own on that node, which the
// node's agent realizes by creating the volume in its pool (desired RUNNING) or deleting it
// with its data (desired ABSENT). The VM's own assignment lists its volumes (status ATTACHING
// or ATTACHED) for the agent to put in the domain; attach and detach set that assignment
// PENDING again (without a new generation, which would mean a reboot), so the agent looks at
// the domain again: it redefines it and hot-plugs or unplugs the disk where the hypervisor
// allows it. Its report says which volumes the domain has now (volumeIDs), and that alone
// moves ATTACHING to ATTACHED and DETACHING to AVAILABLE: a volume the hypervisor could not
// hot-plug stays ATTACHING, its reason saying it takes effect at the VM's next start.
//
// Volumes stay on their node: they are files in its storage pool and nothing copies them
// between nodes. So a VM with volumes does not move in a drain (it is listed as unmovable),
// is resized only in place (placement.Placer.Resize refuses a move naming the volumes), and
// a volume attaches only to VMs on its node. Deleting a VM detaches its
// volumes and keeps their data (AVAILABLE); deleting a volume deletes its data.

// pendingReason is the status reason of a volume not yet attached to any VM.
const pendingReason = "not created yet: a volume is created on the node of the first VM it is attached to"

// CreateVolume creates a volume as the viewer in client's transaction: PENDING, or attached
// at once (AttachVolume) to the VM input names.
func (s *Service) CreateVolume(ctx context.Context, client *ent.Client, input ent.CreateVolumeInput) (*ent.Volume, error) {
	vmID := input.VirtualMachineID
	input.VirtualMachineID = nil
	v, err := client.Volume.Create().SetInput(input).SetStatusReason(pendingReason).Save(ctx)
	if err != nil {
		return nil, err
	}
	if vmID == nil {
		return v, nil
	}
	return s.AttachVolume(ctx, client, v.ID, *vmID)
}

// AttachVolume attaches volume id to VM vmID (see the package documentation above) as the
// viewer, in client's transaction. Attaching a volume to the VM it is attached to is a no-op.
func (s *Service) AttachVolume(ctx context.Context, client *ent.Client, id, vmID int) (*ent.Volume, error) {
	vols, err := s.attach(ctx, client, []int{id}, vmID, "virtualMachineID")
	if err != nil {
		return nil, err
	}
	return vols[0], nil
}

// AttachVolumes attaches the volumes ids to VM vmID at once, like AttachVolume, in a
// number of statements that does not grow with len(ids) (updateVirtualMachine's
// addVolumeIDs and createVirtualMachine's volumeIDs: field names the input field).
func (s *Service) AttachVolumes(ctx context.Context, client *ent.Client, ids []int, vmID int, field string) error {
	_, err := s.attach(ctx, client, ids, vmID, field)
	return err
}

func (s *Service) attach(ctx context.Context, client *ent.Client, ids []int, vmID int, vmField string) ([]*ent.Volume, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	// Which volumes the viewer may read decides; their nodes and VMs' nodes (which tenants
	// may not read) are then read as the system.
	sys := system(ctx)
	visible, err := client.Volume.Query().Where(volume.IDIn(ids...)).IDs(ctx)
	if err != nil {
		return nil, err
	}
	if len(visible) != len(slices.Compact(slices.Sorted(slices.Values(ids)))) {
		if vmField != "virtualMachineID" {
			// An edge of the VM's input (addVolumeIDs, volumeIDs): refused like every edge
			// to a record the viewer may not read (package authz, edges.go).
			return nil, apierr.Forbidden("%s names a volume you may not attach", vmField)
		}
		return nil, apierr.NotFound("volume %v not found", ids)
	}
	// Nothing is said about a volume the viewer may not change (its VM, its tenant, its
	// state): errors name only what the viewer may change (attachedError).
	if ok, err := authz.MayWrite(ctx, client, "Volume", visible...); err != nil {
		return nil, err
	} else if !ok {
		if vmField != "virtualMachineID" {
			return nil, apierr.Forbidden("%s names a volume you may not attach", vmField)
		}
		return nil, apierr.NotFound("volume %v not found", ids) // as an update outside the write scope
	}
	vols, err := client.Volume.Query().Where(volume.IDIn(visible...)).WithTenant().WithNode().
		WithVirtualMachine().All(sys)
	if err != nil {
		return nil, err
	}
	if ok, err := client.VirtualMachine.Query().Where(virtualmachine.ID(vmID)).Exist(ctx); err != nil {
		return nil, err
	} else if !ok {
		return nil, apierr.Validation(vmField, "virtual machine %d not found", vmID)
	}
	vm, err := client.VirtualMachine.Query().Where(virtualmachine.ID(vmID)).WithTenant().WithNode().
		WithRegion(func(q *ent.RegionQuery) { q.Select(region.FieldID) }).Only(sys)
	if err != nil {
		return nil, err
	}
	switch vm.Status {
	case virtualmachine.StatusDeleting, virtualmachine.StatusError, virtualmachine.StatusUnknown:
		return nil, apierr.Validation(vmField, "VM %s is %s: a volume can be attached to it again once it is running or stopped", vm.Name, vm.Status)
	}
	if vm.Edges.Node == nil {
		return nil, apierr.Validation(vmField, "VM %s is moving between nodes: attach the volume once it has arrived", vm.Name)
	}
	node := vm.Edges.Node.ID
	var fresh []*ent.Volume // not created on any node yet: created on the VM's
	var attach []int
	var charge int64
	for _, v := range vols {
		if v.Edges.Tenant.ID != vm.Edges.Tenant.ID {
			// Linking records of two tenants is refused like every cross-tenant edge, before
			// anything about the volume's other records is said, and naming none of them.
			return nil, apierr.Forbidden("%s: volume %d belongs to another tenant than the VM", vmField, v.ID)
		}
		if cur := v.Edges.VirtualMachine; cur != nil {
			if cur.ID == vmID && v.Status != volume.StatusDetaching {
				continue
			}
			return nil, attachedError(ctx, client, v)
		}
		switch v.Status {
		case volume.StatusPending, volume.StatusCreating, volume.StatusAvailable:
		default:
			return nil, apierr.Validation("id", "volume %s is %s: only a PENDING or AVAILABLE volume can be attached", v.Name, v.Status)
		}
		switch {
		case v.Edges.Node == nil:
			fresh = append(fresh, v)
			charge += v.SizeGB
		case v.Edges.Node.ID != node:
			return nil, apierr.Validation(vmField, "volume %s is stored where VM %s cannot reach it: a volume attaches only to VMs on the node it was created on", v.Name, vm.Name)
		}
		attach = append(attach, v.ID)
	}
	if len(attach) > 0 {
		// Claim the volumes first, as the viewer (updating them is what the mutation asks to
		// be allowed) and only while they are still free: of two concurrent attaches of one
		// volume, the second waits on the row, finds it taken and is CONFLICT, so nothing is
		// charged or assigned twice.
		n, err := client.Volume.Update().Where(volume.IDIn(attach...), volume.Not(volume.HasVirtualMachine()),
			volume.StatusIn(volume.StatusPending, volume.StatusCreating, volume.StatusAvailable)).
			SetVirtualMachineID(vmID).SetStatus(volume.StatusAttaching).
			SetStatusReason(fmt.Sprintf("waiting for VM %s's node to attach it", vm.Name)).Save(ctx)
		if err != nil {
			return nil, err
		}
		if n != len(attach) {
			return nil, apierr.Conflict("a volume was attached or deleted meanwhile; try again")
		}
		if len(fresh) > 0 {
			if err := placement.ChargeVolume(ctx, client, vm.Edges.Tenant.ID, node, charge); err != nil {
				return nil, err
			}
			creates := make([]*ent.AssignmentCreate, len(fresh))
			freshIDs := make([]int, len(fresh))
			reserved := make([]metering.Interval, len(fresh))
			for i, v := range fresh {
				reserved[i] = metering.Interval{Kind: metering.KindVolume, ResourceID: v.ID, Name: v.Name,
					TenantID: vm.Edges.Tenant.ID, RegionID: vm.Edges.Region.ID, IOClass: string(v.Type), Quantity: v.SizeGB}
				freshIDs[i] = v.ID
				creates[i] = client.Assignment.Create().SetNodeID(node).SetVolumeID(v.ID).
					SetDesiredState(assignment.DesiredStateRunning).SetStatus(assignment.StatusPending).
					SetStatusReason("create the volume in the node's storage pool")
			}
			if err := client.Assignment.CreateBulk(creates...).Exec(sys); err != nil {
				return nil, fmt.Errorf("assign volumes to their node: %w", err)
			}
			// The ledger: the volumes' storage is reserved from now on.
			if err := metering.Open(ctx, client, s.now(), reserved...); err != nil {
				return nil, err
			}
			if err := client.Volume.Update().Where(volume.IDIn(freshIDs...)).SetNodeID(node).Exec(sys); err != nil {
				return nil, fmt.Errorf("place volumes on their node: %w", err)
			}
		}
		if err := touchVM(ctx, client, vm, "attach volumes"); err != nil {
			return nil, err
		}
	}
	return client.Volume.Query().Where(volume.IDIn(ids...)).Order(ent.Asc(volume.FieldID)).All(ctx)
}

// DetachVolume detaches volume id from its VM as the viewer, in client's transaction:
// DETACHING until the VM's domain no longer has it, then AVAILABLE. A volume the domain
// never had (ATTACHING, or its VM not realized yet) is detached at once.
func (s *Service) DetachVolume(ctx context.Context, client *ent.Client, id int) (*ent.Volume, error) {
	v, err := loadVolume(ctx, client, id)
	if err != nil {
		return nil, err
	}
	vm := v.Edges.VirtualMachine
	if vm == nil {
		if v.Status == volume.StatusAvailable || v.Status == volume.StatusPending || v.Status == volume.StatusCreating {
			return v, nil
		}
		return nil, apierr.Validation("id", "volume %s is %s, not attached", v.Name, v.Status)
	}
	if v.Status == volume.StatusDetaching {
		return v, nil
	}
	realized, err := client.Assignment.Query().
		Where(assignment.HasVirtualMachineWith(virtualmachine.ID(vm.ID)), assignment.DesiredStateNEQ(assignment.DesiredStateAbsent)).
		Exist(system(ctx))
	if err != nil {
		return nil, err
	}
	if v.Status == volume.StatusAttaching && !realized {
		if err := client.Volume.UpdateOneID(v.ID).ClearVirtualMachine().SetStatus(availableOrCreating(ctx, client, v)).
			SetStatusReason("detached before its VM had it").Exec(ctx); err != nil {
			return nil, err
		}
		return client.Volume.Get(ctx, v.ID)
	}
	if err := client.Volume.UpdateOneID(v.ID).SetStatus(volume.StatusDetaching).
		SetStatusReason(fmt.Sprintf("waiting for VM %s's node to detach it", vm.Name)).Exec(ctx); err != nil {
		return nil, err
	}
	if err := touchVM(ctx, client, vm, "detach volume "+v.Name); err != nil {
		return nil, err
	}
	return client.Volume.Get(ctx, v.ID)
}

// DeleteVolume deletes volume id with its data, as the viewer in client's transaction: at
// once when it was never created on a node, otherwise DELETING until its node's agent
// deleted it from the pool (ApplyReport then deletes the row and gives back what
// ChargeVolume charged). An attached volume is VALIDATION: detach it first.
func (s *Service) DeleteVolume(ctx context.Context, client *ent.Client, id int) error {
	v, err := loadVolume(ctx, client, id)
	if err != nil {
		return err
	}
	if v.Edges.VirtualMachine != nil {
		return attachedError(ctx, client, v)
	}
	if v.Status == volume.StatusDeleting {
		return nil
	}
	sys := system(ctx)
	if v.Edges.Node == nil {
		return client.Volume.DeleteOneID(v.ID).Exec(ctx)
	}
	// Only while still unattached: an attach that committed meanwhile wins (CONFLICT here).
	if n, err := client.Volume.Update().Where(volume.ID(v.ID), volume.Not(volume.HasVirtualMachine())).
		SetStatus(volume.StatusDeleting).SetStatusReason("waiting for its node to delete its data").Save(ctx); err != nil {
		return err
	} else if n == 0 {
		return apierr.Conflict("volume %s was attached meanwhile: detach it first", v.Name)
	}
	n, err := client.Assignment.Update().Where(assignment.HasVolumeWith(volume.ID(v.ID))).
		SetDesiredState(assignment.DesiredStateAbsent).SetStatus(assignment.StatusPending).AddGeneration(1).
		SetStatusReason("delete the volume and its data").Save(sys)
	if err != nil {
		return fmt.Errorf("retire volume %s on its node: %w", v.Name, err)
	}
	if n == 0 { // no assignment: nothing was ever created on the node
		if err := placement.ReleaseVolume(ctx, client, v.Edges.Tenant.ID, v.Edges.Node.ID, v.SizeGB); err != nil {
			return err
		}
		if err := metering.Close(ctx, client, s.now(), metering.KindVolume, v.ID); err != nil {
			return err
		}
		return client.Volume.DeleteOneID(v.ID).Exec(sys)
	}
	return nil
}

// applyVolumeReport records an agent's report on a volume's assignment a (already written
// to a): created (AVAILABLE unless attached meanwhile), deleted (the row goes and placement
// gives back what it held) or failed (ERROR with the agent's reason). It returns the
// assignment as it now is (as it was, for a deleted one).
func (s *Service) applyVolumeReport(ctx context.Context, client *ent.Client, a *ent.Assignment, v *ent.Volume, r Report) (*ent.Assignment, error) {
	sys := system(ctx)
	out, err := client.Assignment.Get(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	switch {
	case r.Status == assignment.StatusApplied && a.DesiredState == assignment.DesiredStateAbsent:
		if err := client.Assignment.DeleteOneID(a.ID).Exec(sys); err != nil {
			return nil, fmt.Errorf("delete assignment of volume %s: %w", v.Name, err)
		}
		if err := placement.ReleaseVolume(ctx, client, v.Edges.Tenant.ID, a.Edges.Node.ID, v.SizeGB); err != nil {
			return nil, err
		}
		if err := metering.Close(ctx, client, s.now(), metering.KindVolume, v.ID); err != nil {
			return nil, err
		}
		return out, client.Volume.DeleteOneID(v.ID).Exec(sys)
	case r.Status == assignment.StatusApplied:
		if v.Status == volume.StatusCreating {
			return out, client.Volume.UpdateOneID(v.ID).SetStatus(volume.StatusAvailable).SetStatusReason("created").Exec(sys)
		}
	case r.Status == assignment.StatusFailed:
		what := "create"
		if a.DesiredState == assignment.DesiredStateAbsent {
			what = "delete"
		}
		return out, client.Volume.UpdateOneID(v.ID).SetStatus(volume.StatusError).
			SetStatusReason(truncate.String(fmt.Sprintf("its node could not %s it: %s", what, orUnknown(deref(r.Reason))), maxReason)).Exec(sys)
	}
	return out, nil
}

// applyVolumeIDs moves the volumes of vm from what its node's agent reports its domain has
// (ids): ATTACHING volumes it has become ATTACHED, DETACHING volumes it no longer has become
// AVAILABLE (detached). Volumes the domain did not take yet keep their state, with the
// agent's reason (e.g. that the volume takes effect at the VM's next start).
func applyVolumeIDs(ctx context.Context, client *ent.Client, vm *ent.VirtualMachine, ids []int, reason string) error {
	sys := system(ctx)
	vols, err := client.Volume.Query().Where(volume.HasVirtualMachineWith(virtualmachine.ID(vm.ID)),
		volume.StatusIn(volume.StatusAttaching, volume.StatusDetaching)).All(sys)
	if err != nil {
		return fmt.Errorf("volumes of VM %s: %w", vm.Name, err)
	}
	for _, v := range vols {
		has := slices.Contains(ids, v.ID)
		u := client.Volume.UpdateOne(v)
		switch {
		case v.Status == volume.StatusAttaching && has:
			u.SetStatus(volume.StatusAttached).SetStatusReason("attached")
		case v.Status == volume.StatusDetaching && !has:
			u.ClearVirtualMachine().SetStatus(volume.StatusAvailable).SetStatusReason(fmt.Sprintf("detached from VM %s", vm.Name))
		case reason != "":
			u.SetStatusReason(truncate.String(reason, maxReason))
		default:
			continue
		}
		if err := u.Exec(sys); err != nil {
			return fmt.Errorf("update volume %s: %w", v.Name, err)
		}
	}
	return nil
}

// loadVolume reads volume id, which the viewer must be able to read, with its tenant, node
// and VM (with its node).
// attachedError refuses a change to volume v (read as the system, with its VM) because it
// is attached. Errors name only records the viewer may read (issue 23: one rule for the
// volume, VM, network and address paths): a record reached as the system is named after
// the viewer's own read of it succeeds; otherwise the refusal is FORBIDDEN, as reading it
// would be, and names neither the VM nor the volume (only the id the request gave).
func attachedError(ctx context.Context, client *ent.Client, v *ent.Volume) error {
	vm := v.Edges.VirtualMachine
	if ok, err := client.VirtualMachine.Query().Where(virtualmachine.ID(vm.ID)).Exist(ctx); err != nil {
		return err
	} else if !ok {
		return apierr.Forbidden("volume %d is attached to a VM you may not read", v.ID)
	}
	return apierr.Validation("id", "volume %s is %s VM %s: detach it first", v.Name, attachedWord(v.Status), vm.Name)
}

func loadVolume(ctx context.Context, client *ent.Client, id int) (*ent.Volume, error) {
	// As the viewer first: whether the viewer may read it at all. Its node and its VM's node
	// (which tenants may not read) then as the system.
	if ok, err := client.Volume.Query().Where(volume.ID(id)).Exist(ctx); err != nil {
		return nil, err
	} else if !ok {
		return nil, apierr.NotFound("volume %d not found", id)
	}
	if ok, err := authz.MayWrite(ctx, client, "Volume", id); err != nil {
		return nil, err
	} else if !ok {
		return nil, apierr.NotFound("volume %d not found", id) // as an update outside the write scope
	}
	return client.Volume.Query().Where(volume.ID(id)).WithTenant().WithNode().
		WithVirtualMachine(func(q *ent.VirtualMachineQuery) { q.WithNode() }).Only(system(ctx))
}

// touchVM makes the node's agent look at vm's domain again: its assignment on its node goes
// back to PENDING at the same generation (a new generation of a running VM is a reboot).
// A VM not realized yet has no assignment: its vm:create task hands over its volumes.
func touchVM(ctx context.Context, client *ent.Client, vm *ent.VirtualMachine, why string) error {
	if vm.Edges.Node == nil {
		return nil
	}
	_, err := client.Assignment.Update().
		Where(assignment.HasVirtualMachineWith(virtualmachine.ID(vm.ID)), assignment.HasNodeWith(computenode.ID(vm.Edges.Node.ID)),
			assignment.DesiredStateNEQ(assignment.DesiredStateAbsent)).
		SetStatus(assignment.StatusPending).SetStatusReason(why).Save(system(ctx))
	if err != nil {
		return fmt.Errorf("tell VM %s's node to %s: %w", vm.Name, why, err)
	}
	return nil
}

// availableOrCreating is the status of an unattached volume: AVAILABLE once its node's agent
// created it, CREATING before.
func availableOrCreating(ctx context.Context, client *ent.Client, v *ent.Volume) volume.Status {
	ok, err := client.Assignment.Query().Where(assignment.HasVolumeWith(volume.ID(v.ID)), assignment.StatusEQ(assignment.StatusApplied)).
		Exist(system(ctx))
	if err == nil && ok {
		return volume.StatusAvailable
	}
	return volume.StatusCreating
}

func attachedWord(st volume.Status) string {
	switch st {
	case volume.StatusAttaching:
		return "being attached to"
	case volume.StatusDetaching:
		return "being detached from"
	}
	return "attached to"
}
