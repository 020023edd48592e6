package provision

import (
	"context"
	"fmt"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/controllers/imagestore"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/image"
	"github.com/virtflow/virtflow/ent/snapshot"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/store/rowlock"
	"github.com/virtflow/virtflow/store/truncate"
)

// Images made from a VM (issue 29: createImageFromVirtualMachine).
//
// The mutation checks the VM is STOPPED (its disk does not change under the copy) and
// writes, in its transaction, a catalog image (source vm:<id>, QCOW2, PENDING, its OS and
// minimums those of the VM's image unless given) with an Assignment on the VM's node, so
// that accepted work is never lost: the node's agent copies the root disk (flattened: what
// the guest reads, backing image included), uploads the copy as the image's bytes through
// PUT /images/{id}/data (package imagestore lets the agent of the node the image is assigned
// to do that, and only it) and reports. The upload moves the image to DOWNLOADING and, once
// verified, ACTIVE; an agent that dies first finds the assignment not APPLIED at its next
// resync and starts over. Its FAILED report sets the image ERROR with the reason; APPLIED or
// FAILED ends the assignment (deleted: nothing is left on the node).

// ImageFromVM is what createImageFromVirtualMachine gives besides the VM: the image's name
// and description, and its OS when it differs from that of the VM's image.
type ImageFromVM struct {
	Name              string
	Description       *string
	OsType            *image.OsType
	OsName, OsVersion *string
}

// CreateImageFromVM makes image in from STOPPED VM vmID's root disk as the viewer, in
// client's transaction (see the notes above). The viewer must be allowed to create images
// (createImage's authorization: the platform's operators and administrators) and to read
// the VM.
func (s *Service) CreateImageFromVM(ctx context.Context, client *ent.Client, vmID int, in ImageFromVM) (*ent.Image, error) {
	if !authz.FromContext(ctx).Can("Image", authz.ActWrite) {
		return nil, apierr.Forbidden("only platform operators and administrators create images")
	}
	if ok, err := client.VirtualMachine.Query().Where(virtualmachine.ID(vmID)).Exist(ctx); err != nil {
		return nil, err
	} else if !ok {
		return nil, apierr.Validation("id", "virtual machine %d not found", vmID)
	}
	// The VM's row is locked: a concurrent startVirtualMachine either waits for this
	// transaction and then finds the image being made (diskInUse), or has moved the VM on
	// from STOPPED before this reads it.
	vm, err := client.VirtualMachine.Query().Where(virtualmachine.ID(vmID)).
		WithNode().WithFlavor().WithImage().WithRestoredFrom().Modify(rowlock.ForUpdate).Only(system(ctx))
	if err != nil {
		return nil, err
	}
	switch {
	case vm.Status != virtualmachine.StatusStopped:
		return nil, apierr.Validation("id", "VM %s is %s: stop it first (an image is made from a stopped VM's disk)", vm.Name, vm.Status)
	case vm.Edges.Node == nil:
		return nil, apierr.Validation("id", "VM %s is not on a node", vm.Name)
	case vm.Edges.Image == nil && vm.Edges.RestoredFrom == nil:
		return nil, apierr.Validation("id", "VM %s has no root disk (it was made without an image)", vm.Name)
	}
	c := client.Image.Create().SetName(in.Name).SetNillableDescription(in.Description).
		SetSource(fmt.Sprintf("%s%d", imagestore.SourceVMPrefix, vm.ID)).SetFormat(image.FormatQcow2).SetSizeGB(diskGB(vm)).
		SetStatusReason(fmt.Sprintf("waiting for the node of VM %s to copy its disk", vm.Name))
	if base := vm.Edges.Image; base != nil {
		c.SetOsType(base.OsType).SetOsName(base.OsName).SetOsVersion(base.OsVersion).
			SetMinVcpus(base.MinVcpus).SetMinMemoryMB(base.MinMemoryMB)
	}
	c.SetNillableOsType(in.OsType).SetNillableOsName(in.OsName).SetNillableOsVersion(in.OsVersion)
	img, err := c.Save(ctx) // as the viewer: created like createImage's
	if err != nil {
		return nil, err
	}
	if err := client.Assignment.Create().SetNodeID(vm.Edges.Node.ID).SetImageID(img.ID).
		SetDesiredState(assignment.DesiredStateRunning).SetStatus(assignment.StatusPending).
		SetStatusReason("copy the stopped VM's root disk and upload it as the image's bytes").Exec(system(ctx)); err != nil {
		return nil, fmt.Errorf("assign image %s to the VM's node: %w", img.Name, err)
	}
	return img, nil
}

// diskInUse refuses to start vm while its stopped disk is being read or written by a copy
// that needs it still: an image being made from it (PENDING or DOWNLOADING) or a snapshot
// being reverted onto it. VALIDATION on id, naming the copy.
func diskInUse(ctx context.Context, client *ent.Client, vm *ent.VirtualMachine) error {
	sys := system(ctx)
	img, err := client.Image.Query().
		Where(image.Source(fmt.Sprintf("%s%d", imagestore.SourceVMPrefix, vm.ID)),
			image.StatusIn(image.StatusPending, image.StatusDownloading)).
		First(sys)
	if err != nil && !ent.IsNotFound(err) {
		return err
	}
	if img != nil {
		return apierr.Validation("id", "an image (%s) is being made from VM %s's disk: start the VM once the image is ACTIVE or in ERROR", img.Name, vm.Name)
	}
	snap, err := client.Snapshot.Query().
		Where(snapshot.HasVirtualMachineWith(virtualmachine.ID(vm.ID)), snapshot.StatusEQ(snapshot.StatusReverting)).
		First(sys)
	if err != nil && !ent.IsNotFound(err) {
		return err
	}
	if snap != nil {
		return apierr.Validation("id", "snapshot %s is being reverted onto VM %s's disk: start the VM once it is AVAILABLE again", snap.Name, vm.Name)
	}
	return nil
}

// applyImageReport records an agent's report on the assignment a of image img, made from a
// VM: APPLYING says why it is still PENDING, FAILED sets it ERROR, and APPLIED or FAILED ends
// the assignment. The upload itself moved the image to DOWNLOADING and ACTIVE.
func (s *Service) applyImageReport(ctx context.Context, client *ent.Client, a *ent.Assignment, img *ent.Image, r Report) (*ent.Assignment, error) {
	sys := system(ctx)
	out, err := client.Assignment.Get(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	u := client.Image.UpdateOneID(img.ID)
	switch {
	case r.Status == assignment.StatusApplying && img.Status == image.StatusPending:
		why := "the VM's node is copying its disk"
		if r.Reason != nil && *r.Reason != "" {
			why = "the VM's node waits: " + *r.Reason
		}
		return out, u.SetStatusReason(truncate.String(why, maxReason)).Exec(sys)
	case r.Status == assignment.StatusApplied:
		if img.Status != image.StatusActive && img.Status != image.StatusDeprecated {
			u.SetStatus(image.StatusError).SetStatusReason(fmt.Sprintf("its node reported the upload done, but the image is %s", img.Status))
			if err := u.Exec(sys); err != nil {
				return nil, err
			}
		}
	case r.Status == assignment.StatusFailed:
		if err := u.SetStatus(image.StatusError).ClearUploadID().ClearUploadExpiresAt().
			SetStatusReason(truncate.String("its node could not make it: "+orUnknown(deref(r.Reason)), maxReason)).Exec(sys); err != nil {
			return nil, err
		}
	default:
		return out, nil
	}
	return out, client.Assignment.DeleteOneID(a.ID).Exec(sys)
}
