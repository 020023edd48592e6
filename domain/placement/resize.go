package placement

import (
	"context"
	"fmt"
	"strings"

	"entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/metering"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/ent/volume"
)

// Resized is what Resize did to a VM.
type Resized struct {
	VM *ent.VirtualMachine
	// Moved is set when the node the VM was on could not take the new size and the VM was
	// placed on another node (From → To, node ids).
	Moved    bool
	From, To int
	// Changed is false when the VM already had the flavor (nothing was written).
	Changed bool
}

// Resize changes a STOPPED VM's flavor as the viewer in ctx, in the caller's transaction
// (or one of its own): what the VM held is given back, then the new size is placed on its
// own node if that node still fits it, otherwise anywhere its policy allows (a cold move,
// re-placed like a drain re-places, moving zone, cluster and node together: moves.go). A
// VM with volumes is only resized in place: volumes are stored on its node and do not move
// (NO_CAPACITY on flavorID naming them). A root disk only grows: a flavor with a smaller
// disk is VALIDATION on flavorID. The tenant's quota is checked as for a new VM after
// the old size was given back, which is checking the difference. The image's minimum vCPUs
// and memory must fit the new flavor (VALIDATION on flavorID). The VM's revision grows by
// one and the spec it had is appended to revision_history, which keeps the newest
// max_revision_history entries. The caller tells the node's agent (provision.Service.Resize).
func (p *Placer) Resize(ctx context.Context, client *ent.Client, vmID, flavorID int) (*Resized, error) {
	var out *Resized
	own, err := inTx(ctx, client, func(t *txn) error {
		if ok, err := t.c.VirtualMachine.Query().Where(virtualmachine.ID(vmID)).Exist(ctx); err != nil {
			return err
		} else if !ok {
			return apierr.NotFound("virtual machine %d not found", vmID)
		}
		sys := system(ctx)
		vm, err := t.c.VirtualMachine.Query().Where(virtualmachine.ID(vmID)).
			WithTenant(func(q *ent.TenantQuery) { q.Select("id") }).
			WithRegion(func(q *ent.RegionQuery) { q.Select("id") }).
			WithFlavor().WithNode().WithAvailabilityZone().
			WithImage(func(q *ent.ImageQuery) { q.Select("id") }).
			WithRegionService(func(q *ent.RegionServiceQuery) { q.Select("id") }).
			Only(sys)
		if err != nil {
			return fmt.Errorf("load VM %d: %w", vmID, err)
		}
		if svc := vm.Edges.RegionService; svc != nil {
			return apierr.Validation("id", "virtual machine %s is a replica of a region service: its size is the service's", vm.Name)
		}
		f, err := loadFlavor(ctx, t.c, flavorID, "flavorID")
		if err != nil {
			return err
		}
		if vm.Edges.Flavor != nil && vm.Edges.Flavor.ID == f.ID {
			out = &Resized{VM: vm}
			return nil
		}
		if f.Disabled {
			return apierr.Validation("flavorID", "flavor %s is disabled for new VMs", f.Name)
		}
		if vm.Status != virtualmachine.StatusStopped {
			return apierr.Validation("id", "virtual machine %s is %s: stop it before resizing", vm.Name, vm.Status)
		}
		if img := vm.Edges.Image; img != nil {
			if err := imageFits(ctx, t.c, img.ID, f); err != nil {
				return err
			}
		}
		if f.DiskGB < vm.AllocatedDiskGB {
			// The root disk grows with the flavor (the node's agent resizes the overlay);
			// a file system on it cannot be shrunk safely from outside the guest.
			return apierr.Validation("flavorID", "flavor %s has a %d GB root disk, smaller than the %d GB virtual machine %s has: a root disk only grows",
				f.Name, f.DiskGB, vm.AllocatedDiskGB, vm.Name)
		}
		vols, err := t.c.Volume.Query().Where(volume.HasVirtualMachineWith(virtualmachine.ID(vmID))).
			Order(ent.Asc(volume.FieldID)).Select(volume.FieldName).Strings(sys)
		if err != nil {
			return fmt.Errorf("volumes of VM %d: %w", vmID, err)
		}
		from := vm.Edges.Node
		if from == nil {
			return apierr.Validation("id", "virtual machine %s is not placed on a node", vm.Name)
		}
		// The viewer's write first: it checks the viewer may change the VM.
		history := append(vm.RevisionHistory, fieldtype.VMRevision{Revision: vm.Revision,
			FlavorID: vm.Edges.Flavor.ID, FlavorName: vm.Edges.Flavor.Name, VCPUs: vm.AllocatedVcpus,
			MemoryMB: vm.AllocatedMemoryMB, DiskGB: vm.AllocatedDiskGB, CreatedAt: vm.UpdatedAt})
		if keep := vm.MaxRevisionHistory; len(history) > keep {
			history = history[len(history)-keep:]
		}
		if err := t.c.VirtualMachine.UpdateOneID(vmID).AddRevision(1).SetRevisionHistory(history).Exec(ctx); err != nil {
			return err
		}
		if err := t.take(ctx, rowKey{classVM, vmID}); err != nil {
			return err
		}
		held, err := allocations(ctx, t.c, func(s *sql.Selector) { s.Where(sql.EQ(s.C(virtualmachine.FieldID), vmID)) })
		if err != nil {
			return err
		}
		if err := t.release(ctx, held); err != nil {
			return err
		}
		req := Request{TenantID: vm.Edges.Tenant.ID, RegionID: vm.Edges.Region.ID, Flavor: f, Count: 1,
			Policy: vm.SchedulePolicy}
		if err := moveScope(ctx, t.c, vm, &req); err != nil {
			return err
		}
		here := req
		here.Policy.NodeNames = []string{from.Name}
		placed, err := p.place(ctx, t, here)
		if e, ok := apierr.As(err); ok && e.Code == apierr.CodeNoCapacity {
			if len(vols) > 0 {
				// Volumes are files in the node's storage pool and no path copies them to
				// another node: the VM may only be resized where it is.
				return &apierr.Error{Code: apierr.CodeNoCapacity, Field: "flavorID", Message: fmt.Sprintf(
					"virtual machine %s cannot leave its node, which has no room for flavor %s: its volume(s) %s are stored on that node and volumes do not move between nodes; "+
						"choose a flavor that fits the node (an in-place resize), or detach the volumes (their data stays on the node) to resize it onto another node: %s",
					vm.Name, f.Name, strings.Join(vols, ", "), e.Message)}
			}
			placed, err = p.place(ctx, t, req) // the node is full: anywhere else
		}
		if err != nil {
			return err
		}
		to := placed.Decision.Placements[0].NodeID
		reason := fmt.Sprintf("resized from flavor %s to %s; stopped", vm.Edges.Flavor.Name, f.Name)
		if to != from.ID {
			reason = fmt.Sprintf("resized from flavor %s to %s and moved to another node (its node had no room); stopped", vm.Edges.Flavor.Name, f.Name)
		}
		mask, numa := placed.HeldBy(to)
		u := t.c.VirtualMachine.UpdateOneID(vmID).SetFlavorID(f.ID).
			SetNodeID(to).SetClusterID(placed.Decision.ClusterID).
			SetAllocatedVcpus(f.Vcpus).SetAllocatedMemoryMB(f.MemoryMB).SetAllocatedDiskGB(f.DiskGB).
			SetExclusiveMask(mask).
			SetStatusReason(reason)
		setNUMANode(u, numa)
		setZone(u, vm, placed.zoneOf(to))
		updated, err := u.Save(sys)
		if err != nil {
			return fmt.Errorf("resize VM %d: %w", vmID, err)
		}
		if err := metering.ReopenVMs(ctx, t.c, p.cfg.Clock(), vmID); err != nil {
			return err
		}
		out = &Resized{VM: updated, Changed: true, Moved: to != from.ID, From: from.ID, To: to}
		return nil
	})
	if err != nil {
		return nil, collision(err)
	}
	if own {
		out.VM = out.VM.Unwrap()
	}
	return out, nil
}
