package placement

import (
	"context"
	"fmt"

	"entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/apierr"
	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// CreateVM creates the VM of input as the viewer in ctx, who must be allowed to, and
// places it: its node and cluster are set, the node's allocation and the tenant's quota
// usage grow by its flavor, and it stays INITIALIZING with a reason naming the node, for
// the provisioning pipeline. When it fits nowhere the error is NO_CAPACITY or
// QUOTA_EXCEEDED, with the rejections counted in extensions.reasons, and the transaction
// must not commit: in a transaction of its own nothing is written; in the caller's, the
// caller rolls back (every GraphQL mutation does on error).
func (p *Placer) CreateVM(ctx context.Context, client *ent.Client, input ent.CreateVirtualMachineInput) (*ent.VirtualMachine, error) {
	var vm *ent.VirtualMachine
	own, err := inTx(ctx, client, func(t *txn) error {
		created, err := t.c.VirtualMachine.Create().SetInput(input).SetStatusChangedAt(p.cfg.Clock()).Save(ctx)
		if err != nil {
			return err
		}
		f, err := loadFlavor(ctx, t.c, input.FlavorID, "flavorID")
		if err != nil {
			return err
		}
		if f.Disabled {
			return apierr.Validation("flavorID", "flavor %s is disabled for new VMs", f.Name)
		}
		var pol fieldtype.SchedulePolicy
		if input.SchedulePolicy != nil {
			pol = *input.SchedulePolicy
		}
		placed, err := p.place(ctx, t, Request{TenantID: input.TenantID, RegionID: input.RegionID,
			Flavor: f, Count: 1, Policy: pol})
		if err != nil {
			return err
		}
		at := placed.Decision.Placements[0].NodeID
		vm, err = t.c.VirtualMachine.UpdateOne(created).
			SetNodeID(at).SetClusterID(placed.Decision.ClusterID).
			SetAllocatedVcpus(f.Vcpus).SetAllocatedMemoryMB(f.MemoryMB).SetAllocatedDiskGB(f.DiskGB).
			SetStatusReason(fmt.Sprintf("placed on node %s; waiting to be provisioned", placed.NodeName(at))).
			Save(system(ctx))
		return err
	})
	if err != nil {
		return nil, collision(err)
	}
	if own {
		vm = vm.Unwrap()
	}
	return vm, nil
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
		if err := t.c.VirtualMachine.SafeDelete(ctx, id); err != nil {
			return err
		}
		if err := t.release(ctx, held); err != nil {
			return err
		}
		if svc != 0 {
			return t.settleReplicas(ctx, svc)
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
