package provision

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/controllers/outbox"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/regionservice"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/ent/volume"
)

// system is ctx acting as the provisioning component.
func system(ctx context.Context) context.Context { return authz.SystemContext(ctx, "provision") }

// CreateVM creates and places the VM of input (placement.Placer.CreateVM: INITIALIZING on
// its node) and records its vm:create task, all in client's transaction.
// The volumes input.VolumeIDs names are attached to the placed VM (AttachVolumes), in the
// same transaction.
func (s *Service) CreateVM(ctx context.Context, client *ent.Client, input ent.CreateVirtualMachineInput) (*ent.VirtualMachine, error) {
	vols := input.VolumeIDs
	input.VolumeIDs = nil
	vm, err := s.placer.CreateVM(ctx, client, input)
	if err != nil {
		return nil, err
	}
	if err := s.AttachVolumes(ctx, client, vols, vm.ID, "volumeIDs"); err != nil {
		return nil, err
	}
	if err := enqueueCreate(ctx, client, vm.ID, true); err != nil {
		return nil, err
	}
	return vm, nil
}

// UpdateVM applies updateVirtualMachine's input as the viewer, in client's transaction; the
// volumes it adds are attached (AttachVolumes) and those it removes detached (DetachVolume),
// so that the input's volume edges follow the same rules as attachVolume and detachVolume.
func (s *Service) UpdateVM(ctx context.Context, client *ent.Client, id int, input ent.UpdateVirtualMachineInput) (*ent.VirtualMachine, error) {
	add, remove, clear := input.AddVolumeIDs, input.RemoveVolumeIDs, input.ClearVolumes
	input.AddVolumeIDs, input.RemoveVolumeIDs, input.ClearVolumes = nil, nil, false
	vm, err := client.VirtualMachine.UpdateOneID(id).SetInput(input).Save(ctx)
	if err != nil {
		return nil, err
	}
	if clear {
		ids, err := client.VirtualMachine.QueryVolumes(vm).IDs(ctx)
		if err != nil {
			return nil, err
		}
		remove = append(remove, ids...)
	}
	if len(remove) > 0 {
		// Only the VM's own volumes: removing another VM's volume is not this VM's to do.
		if remove, err = client.Volume.Query().Where(volume.IDIn(remove...), volume.HasVirtualMachineWith(virtualmachine.ID(id))).IDs(ctx); err != nil {
			return nil, err
		}
	}
	for _, v := range remove {
		if _, err := s.DetachVolume(ctx, client, v); err != nil {
			return nil, err
		}
	}
	if err := s.AttachVolumes(ctx, client, add, id, "addVolumeIDs"); err != nil {
		return nil, err
	}
	return client.VirtualMachine.Get(ctx, id)
}

// CreateService creates a region service and its replicas (placement.Placer.CreateService)
// and records a vm:create task for every replica.
func (s *Service) CreateService(ctx context.Context, client *ent.Client, input ent.CreateRegionServiceInput) (*ent.RegionService, error) {
	svc, err := s.placer.CreateService(ctx, client, input)
	if err != nil {
		return nil, err
	}
	return svc, enqueueReplicas(ctx, client, svc.ID)
}

// ScaleService scales a region service (placement.Placer.ScaleService) and records a
// vm:create task for every new replica.
func (s *Service) ScaleService(ctx context.Context, client *ent.Client, id, replicas int) (*ent.RegionService, error) {
	svc, err := s.placer.ScaleService(ctx, client, id, replicas)
	if err != nil || svc == nil {
		return svc, err
	}
	return svc, enqueueReplicas(ctx, client, id)
}

// enqueueReplicas records vm:create for the service's placed replicas that have no task
// yet (the dedup key vm:create:<id> makes this safe to repeat).
func enqueueReplicas(ctx context.Context, client *ent.Client, svc int) error {
	ids, err := client.VirtualMachine.Query().Where(
		virtualmachine.HasRegionServiceWith(regionservice.ID(svc)),
		virtualmachine.StatusEQ(virtualmachine.StatusInitializing),
		virtualmachine.HasNode(), virtualmachine.Not(virtualmachine.HasAssignments()),
	).IDs(system(ctx))
	if err != nil {
		return fmt.Errorf("replicas of region service %d: %w", svc, err)
	}
	for _, id := range ids {
		if err := enqueueCreate(ctx, client, id, true); err != nil {
			return err
		}
	}
	return nil
}

// enqueueCreate records vm:create for VM id; dedup makes it once per VM (retries after an
// ERROR and the reconcile loop pass false).
func enqueueCreate(ctx context.Context, client *ent.Client, id int, dedup bool) error {
	key := ""
	if dedup {
		key = TypeVMCreate + ":" + strconv.Itoa(id)
	}
	return enqueue(ctx, client, TypeVMCreate, id, 0, key)
}

// enqueue records a VM task on the queue of the VM's region.
func enqueue(ctx context.Context, client *ent.Client, kind string, vm int, from int64, key string) error {
	region, err := client.VirtualMachine.Query().Where(virtualmachine.ID(vm)).QueryRegion().Only(system(ctx))
	if err != nil {
		return fmt.Errorf("region of VM %d: %w", vm, err)
	}
	payload, _ := json.Marshal(Payload{VM: vm, From: from})
	return outbox.Enqueue(ctx, client, outbox.Task{Kind: kind, Queue: Queue(region.Name), Payload: payload, DedupKey: key})
}

// Start powers on a STOPPED (or failed) VM: STARTING, then ACTIVE once its agent reports it
// running. A VM that failed before it was ever created on its node is created again.
func (s *Service) Start(ctx context.Context, client *ent.Client, id int) (*ent.VirtualMachine, error) {
	return s.request(ctx, client, id, actions[TypeVMStart])
}

// Stop shuts an ACTIVE (or failed) VM down: STOPPING, then STOPPED.
func (s *Service) Stop(ctx context.Context, client *ent.Client, id int) (*ent.VirtualMachine, error) {
	return s.request(ctx, client, id, actions[TypeVMStop])
}

// Reboot reboots an ACTIVE VM: REBOOTING, then ACTIVE.
func (s *Service) Reboot(ctx context.Context, client *ent.Client, id int) (*ent.VirtualMachine, error) {
	return s.request(ctx, client, id, actions[TypeVMReboot])
}

// loadVM reads the VM as the viewer (NOT_FOUND when it may not see or not change it) with
// its node and its assignment on that node.
func loadVM(ctx context.Context, client *ent.Client, id int) (*ent.VirtualMachine, *ent.Assignment, error) {
	// Visible to the viewer? Then its node, which tenants may not read, as the system.
	if ok, err := client.VirtualMachine.Query().Where(virtualmachine.ID(id)).Exist(ctx); err != nil {
		return nil, nil, err
	} else if !ok {
		return nil, nil, apierr.NotFound("virtual machine %d not found", id)
	}
	// Every caller changes it: nothing about its state is said to a viewer who may read it
	// but not change it (attachedError's rule); NOT_FOUND, as an update outside the viewer's
	// write scope is.
	if ok, err := authz.MayWrite(ctx, client, "VirtualMachine", id); err != nil {
		return nil, nil, err
	} else if !ok {
		return nil, nil, apierr.NotFound("virtual machine %d not found", id)
	}
	vm, err := client.VirtualMachine.Query().Where(virtualmachine.ID(id)).WithNode().Only(system(ctx))
	if err != nil {
		return nil, nil, err
	}
	a, err := assignmentOf(ctx, client, vm)
	return vm, a, err
}

// assignmentOf returns the VM's assignment on its node, or nil.
func assignmentOf(ctx context.Context, client *ent.Client, vm *ent.VirtualMachine) (*ent.Assignment, error) {
	if vm.Edges.Node == nil {
		return nil, nil
	}
	a, err := client.Assignment.Query().Where(assignment.HasVirtualMachineWith(virtualmachine.ID(vm.ID)),
		assignment.HasNodeWith(computenode.ID(vm.Edges.Node.ID))).First(system(ctx))
	if ent.IsNotFound(err) {
		return nil, nil
	}
	return a, err
}

// request validates a power action against the VM's state, moves the VM to the action's
// transitional state as the viewer and records the task.
func (s *Service) request(ctx context.Context, client *ent.Client, id int, act action) (*ent.VirtualMachine, error) {
	vm, a, err := loadVM(ctx, client, id)
	if err != nil {
		return nil, err
	}
	if slices.Contains(act.noop, vm.Status) {
		return vm, nil
	}
	if !slices.Contains(act.from, vm.Status) {
		return nil, apierr.Validation("id", "virtual machine %s is %s: it cannot %s now", vm.Name, vm.Status, act.verb)
	}
	if a == nil {
		// Failed before its node ever got it: only start makes sense, and it creates it again.
		if act.kind != TypeVMStart {
			return nil, apierr.Validation("id", "virtual machine %s was never created on a node: start it to try again, or delete it", vm.Name)
		}
		return s.transition(ctx, client, vm, virtualmachine.StatusInitializing,
			"creation retried: waiting for a worker", func() error { return enqueueCreate(ctx, client, vm.ID, false) })
	}
	if act.kind == TypeVMStart {
		if err := diskInUse(ctx, client, vm); err != nil {
			return nil, err
		}
	}
	return s.transition(ctx, client, vm, act.pending,
		fmt.Sprintf("%s requested: waiting for a worker", act.verb),
		func() error {
			if act.kind == TypeVMStart {
				// Again after the transition's UPDATE, which holds the VM's row: a copy of
				// its disk requested concurrently (it locks the row too) is seen here, or
				// it sees the VM no longer STOPPED.
				if err := diskInUse(ctx, client, vm); err != nil {
					return err
				}
			}
			return enqueue(ctx, client, act.kind, vm.ID, a.Generation, "")
		})
}

// transition moves vm to status as the viewer, only if its status did not change since it
// was read, then runs then (recording the task) and returns the VM as the viewer sees it.
func (s *Service) transition(ctx context.Context, client *ent.Client, vm *ent.VirtualMachine, status virtualmachine.Status,
	reason string, then func() error) (*ent.VirtualMachine, error) {
	n, err := client.VirtualMachine.Update().
		Where(virtualmachine.ID(vm.ID), virtualmachine.StatusEQ(vm.Status)).
		SetStatus(status).SetStatusReason(reason).SetStatusChangedAt(s.now()).Save(ctx)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		// Either its status moved meanwhile, or the viewer may read but not change it (a
		// maintainer of other VMs): then, like every update outside the viewer's scope,
		// the VM is not found.
		cur, err := client.VirtualMachine.Get(system(ctx), vm.ID)
		if err == nil && cur.Status != vm.Status {
			return nil, apierr.Conflict("virtual machine %s changed meanwhile; try again", vm.Name)
		}
		return nil, apierr.NotFound("virtual machine %d not found", vm.ID)
	}
	if err := settleService(ctx, client, vm.ID, s.now()); err != nil {
		return nil, err
	}
	if err := then(); err != nil {
		return nil, err
	}
	return client.VirtualMachine.Get(ctx, vm.ID)
}

// DeleteVM deletes a VM: at once when it is not realized on its node (no assignment
// there yet), otherwise asynchronously (DELETING until its agent reports it gone).
// Deleting a DELETING VM changes nothing, unless force.
//
// With force (operators only: writers of the compute fabric) the VM goes at once whatever
// its node says, freeing its node capacity and its tenant's quota: for a VM whose node is
// DOWN and will not report. Its assignments stay, desired ABSENT and detached from the VM
// but naming it (vmID), so the node's agent removes the leftover domain if it comes back.
func (s *Service) DeleteVM(ctx context.Context, client *ent.Client, id int, force bool) error {
	if force && !authz.FromContext(ctx).Can("ComputeNode", authz.ActWrite) {
		return apierr.Forbidden("only operators may delete a virtual machine with force")
	}
	vm, _, err := loadVM(ctx, client, id)
	if err != nil {
		return err
	}
	if vm.Status == virtualmachine.StatusDeleting && !force {
		return nil
	}
	// Move to DELETING first: as the viewer (authorization) and taking the VM's row lock,
	// so that a vm:create running now either committed its assignment before (seen below)
	// or will find the VM gone.
	if vm.Status != virtualmachine.StatusDeleting {
		if _, err := s.transition(ctx, client, vm, virtualmachine.StatusDeleting, "delete requested: waiting for a worker",
			func() error { return nil }); err != nil {
			return err
		}
	}
	a, err := assignmentOf(ctx, client, vm)
	if err != nil {
		return err
	}
	if a != nil && !force {
		return enqueue(ctx, client, TypeVMDelete, id, a.Generation, "")
	}
	// Not realized on its node (or forced): what other nodes still hold of it (the old copy
	// of a VM being moved, or everything with force) is left to their agents.
	if err := orphanAssignments(ctx, client, vm); err != nil {
		return err
	}
	return s.placer.DeleteVM(ctx, client, id)
}

// orphanAssignments turns every assignment of vm into a desired-ABSENT assignment that no
// longer points at the VM (it keeps vmID), so that the VM can be deleted now and each
// node's agent still removes its domain; ApplyReport deletes such an assignment once its
// agent reports it applied.
func orphanAssignments(ctx context.Context, client *ent.Client, vm *ent.VirtualMachine) error {
	sys := system(ctx)
	if _, err := client.Assignment.Update().Where(assignment.HasVirtualMachineWith(virtualmachine.ID(vm.ID)),
		assignment.DesiredStateNEQ(assignment.DesiredStateAbsent)).
		SetDesiredState(assignment.DesiredStateAbsent).SetStatus(assignment.StatusPending).AddGeneration(1).
		SetStatusReason(fmt.Sprintf("VM %s deleted: remove its domain", vm.Name)).Save(sys); err != nil {
		return fmt.Errorf("retire assignments of VM %s: %w", vm.Name, err)
	}
	if _, err := client.Assignment.Update().Where(assignment.HasVirtualMachineWith(virtualmachine.ID(vm.ID))).
		ClearVirtualMachine().Save(sys); err != nil {
		return fmt.Errorf("detach assignments of VM %s: %w", vm.Name, err)
	}
	return nil
}

// removeRealizedReplica is the Placer's ReplicaRemover: it takes over placement's removal of a region-service replica that is
// realized on its node (it has an assignment): the replica is deleted like [DeleteVM],
// asynchronously. Unrealized replicas are left to placement, which deletes them at once.
func (s *Service) removeRealizedReplica(ctx context.Context, client *ent.Client, vm int) (bool, error) {
	realized, err := client.Assignment.Query().Where(assignment.HasVirtualMachineWith(virtualmachine.ID(vm))).Exist(system(ctx))
	if err != nil || !realized {
		return false, err
	}
	return true, s.DeleteVM(ctx, client, vm, false)
}

// DeleteService deletes a region service (placement.Placer.DeleteService). Replicas not yet
// realized go at once; realized ones are deleted like [DeleteVM], asynchronously (see
// removeRealizedReplica), and then the service stays DELETING until its last replica is
// gone, when the replica's final delete takes the service with it.
func (s *Service) DeleteService(ctx context.Context, client *ent.Client, id int) error {
	return s.placer.DeleteService(ctx, client, id)
}

// EnqueueCreate records vm:create for VM id, once per VM (the dedup key vm:create:<id>
// makes a repeat harmless), in client's transaction: for VMs a system workflow created
// through placement.Placer.CreateGroup (package kubecluster).
func EnqueueCreate(ctx context.Context, client *ent.Client, id int) error {
	return enqueueCreate(ctx, client, id, true)
}
