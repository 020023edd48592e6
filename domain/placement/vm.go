package placement

import (
	"context"
	"fmt"

	"entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/metering"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/availabilityzone"
	"github.com/virtflow/virtflow/ent/image"
	"github.com/virtflow/virtflow/ent/region"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
	"github.com/virtflow/virtflow/ent/securityrule"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// CreateVM creates the VM of input as the viewer in ctx, who must be allowed to, and
// places it: its node and cluster are set, the node's allocation and the tenant's quota
// usage grow by its flavor, and it stays INITIALIZING (its reason never names the node: tenants read it) for
// the provisioning pipeline. When it fits nowhere the error is NO_CAPACITY or
// QUOTA_EXCEEDED, with the rejections counted in extensions.reasons, and the transaction
// must not commit: in a transaction of its own nothing is written; in the caller's, the
// caller rolls back (every GraphQL mutation does on error).
func (p *Placer) CreateVM(ctx context.Context, client *ent.Client, input ent.CreateVirtualMachineInput) (*ent.VirtualMachine, error) {
	var vm *ent.VirtualMachine
	// The networks and keys are linked by placement after it checked them (networksFor,
	// sshKeysFor): a tenant may put its VM on a network it may read but not write.
	netIDs, keyIDs := input.NetworkIDs, input.SSHKeyIDs
	input.NetworkIDs, input.SSHKeyIDs = nil, nil
	own, err := inTx(ctx, client, func(t *txn) error {
		created, err := t.c.VirtualMachine.Create().SetInput(input).SetStatusChangedAt(p.cfg.Clock()).Save(ctx)
		if err != nil {
			return err
		}
		nets, err := networksFor(ctx, t.c, input.TenantID, input.RegionID, netIDs, "networkIDs")
		if err != nil {
			return err
		}
		if err := sshKeysFor(ctx, t.c, input.TenantID, keyIDs); err != nil {
			return err
		}
		if len(keyIDs) > 0 {
			if err := t.c.VirtualMachine.UpdateOne(created).AddSSHKeyIDs(keyIDs...).Exec(system(ctx)); err != nil {
				return err
			}
		}
		f, err := loadFlavor(ctx, t.c, input.FlavorID, "flavorID")
		if err != nil {
			return err
		}
		if f.Disabled {
			return apierr.Validation("flavorID", "flavor %s is disabled for new VMs", f.Name)
		}
		if input.ImageID != nil {
			if err := imageFits(ctx, t.c, *input.ImageID, f); err != nil {
				return err
			}
		}
		az, err := chosenZone(ctx, t.c, input.AvailabilityZoneID, input.RegionID)
		if err != nil {
			return err
		}
		var pol fieldtype.SchedulePolicy
		if input.SchedulePolicy != nil {
			pol = *input.SchedulePolicy
		}
		placed, err := p.place(ctx, t, Request{TenantID: input.TenantID, RegionID: input.RegionID,
			Flavor: f, Count: 1, Policy: pol, AvailabilityZone: az})
		if err != nil {
			return err
		}
		at := placed.Decision.Placements[0].NodeID
		mask, numa := placed.HeldBy(at)
		upd := t.c.VirtualMachine.UpdateOne(created).
			SetNodeID(at).SetClusterID(placed.Decision.ClusterID).
			SetAllocatedVcpus(f.Vcpus).SetAllocatedMemoryMB(f.MemoryMB).SetAllocatedDiskGB(f.DiskGB).
			SetExclusiveMask(mask).SetNillableNumaNode(numa).
			// Tenants read the reason: it never names the node (operators see the node edge).
			SetStatusReason("placed; waiting to be provisioned")
		if input.AvailabilityZoneID == nil {
			if zone := placed.Snapshot.nodes[at].azID; zone != 0 {
				upd.SetAvailabilityZoneID(zone)
			}
		} else {
			upd.SetAvailabilityZoneChosen(true)
		}
		vm, err = upd.Save(system(ctx))
		if err != nil {
			return err
		}
		if err := metering.OpenVMs(ctx, t.c, p.cfg.Clock(), vm.ID); err != nil {
			return err
		}
		return t.attachNICs(ctx, []int{vm.ID}, nets, "networkIDs")
	})
	if err != nil {
		return nil, collision(err)
	}
	if own {
		vm = vm.Unwrap()
	}
	return vm, nil
}

// imageFits checks that the image can be used (not in ERROR: VALIDATION on imageID; a
// PENDING or DOWNLOADING image is waited for by the provisioning task) and that the flavor
// gives it at least its minimum vCPUs and memory (VALIDATION on flavorID otherwise).
func imageFits(ctx context.Context, c *ent.Client, imageID int, f *ent.Flavor) error {
	img, err := c.Image.Query().Where(image.ID(imageID)).
		Select(image.FieldName, image.FieldStatus, image.FieldStatusReason, image.FieldMinVcpus, image.FieldMinMemoryMB).
		Only(authz.Unrestricted(ctx))
	if ent.IsNotFound(err) {
		return apierr.Validation("imageID", "image %d does not exist", imageID)
	}
	if err != nil {
		return fmt.Errorf("load image %d: %w", imageID, err)
	}
	switch {
	case img.Status == image.StatusError:
		return apierr.Validation("imageID", "image %s is in ERROR and cannot be used: %s", img.Name, img.StatusReason)
	case f.Vcpus < img.MinVcpus:
		return apierr.Validation("flavorID", "image %s needs at least %d vCPUs; flavor %s has %d", img.Name, img.MinVcpus, f.Name, f.Vcpus)
	case f.MemoryMB < img.MinMemoryMB:
		return apierr.Validation("flavorID", "image %s needs at least %d MB of memory; flavor %s has %d MB", img.Name, img.MinMemoryMB, f.Name, f.MemoryMB)
	}
	return nil
}

// chosenZone returns the name of the availability zone a tenant chose (empty when none),
// which must be a zone of the region (VALIDATION on availabilityZoneID otherwise).
func chosenZone(ctx context.Context, c *ent.Client, id *int, regionID int) (string, error) {
	if id == nil {
		return "", nil
	}
	az, err := c.AvailabilityZone.Query().Where(availabilityzone.ID(*id),
		availabilityzone.HasRegionWith(region.ID(regionID))).Only(authz.Unrestricted(ctx))
	if ent.IsNotFound(err) {
		return "", apierr.Validation("availabilityZoneID", "availability zone %d is not a zone of the VM's region", *id)
	}
	if err != nil {
		return "", fmt.Errorf("load availability zone %d: %w", *id, err)
	}
	return az.Name, nil
}

// DeleteVM deletes the VM as the viewer in ctx (who must be allowed to; it must have no
// ports, volumes or assignments left) and gives what it held back to its node and its
// tenant's quota. A replica of a region service lowers the service's replicas; the service
// goes with its last replica.
func (p *Placer) DeleteVM(ctx context.Context, client *ent.Client, id int) error {
	_, err := inTx(ctx, client, func(t *txn) error {
		if ok, err := t.c.VirtualMachine.Query().Where(virtualmachine.ID(id)).Exist(ctx); err != nil {
			return err
		} else if !ok {
			return apierr.NotFound("virtual machine %d not found", id)
		}
		svc, err := serviceOfVM(ctx, t.c, id)
		if err != nil {
			return err
		}
		if svc != 0 {
			if err := t.take(ctx, rowKey{classService, svc}); err != nil {
				return err
			}
		}
		if err := t.take(ctx, rowKey{classVM, id}); err != nil {
			return err
		}
		held, err := allocations(ctx, t.c, func(s *sql.Selector) { s.Where(sql.EQ(s.C(virtualmachine.FieldID), id)) })
		if err != nil {
			return err
		}
		if err := t.releaseNICs(ctx, []int{id}); err != nil {
			return err
		}
		if err := keepVolumes(ctx, t.c, id); err != nil {
			return err
		}
		// The VM's ACL rules (SecurityRule) belong to it and go with it, whoever may delete
		// the VM (its maintainer too, who does not write rules): as the system.
		if _, err := t.c.SecurityRule.Delete().Where(securityrule.HasVirtualMachineWith(virtualmachine.ID(id))).Exec(system(ctx)); err != nil {
			return fmt.Errorf("delete the security rules of VM %d: %w", id, err)
		}
		if err := t.c.VirtualMachine.SafeDelete(ctx, id); err != nil {
			return err
		}
		if err := metering.Close(ctx, t.c, p.cfg.Clock(), metering.KindVM, id); err != nil {
			return err
		}
		if err := t.release(ctx, held); err != nil {
			return err
		}
		if svc != 0 {
			return t.settleReplicas(ctx, svc, p.cfg.Clock())
		}
		return nil
	})
	return collision(err)
}

// serviceOfVM returns the region service a VM is a replica of, or 0.
func serviceOfVM(ctx context.Context, c *ent.Client, id int) (int, error) {
	var ids []struct {
		Service int `sql:"service"`
	}
	err := c.VirtualMachine.Query().Where(virtualmachine.ID(id)).Modify(func(s *sql.Selector) {
		s.Select()
		s.AppendSelectExprAs(sql.Expr(fmt.Sprintf("COALESCE(%s, 0)", s.C(virtualmachine.RegionServiceColumn))), "service")
	}).Scan(authz.Unrestricted(ctx), &ids)
	if err != nil {
		return 0, fmt.Errorf("region service of VM %d: %w", id, err)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	return ids[0].Service, nil
}
