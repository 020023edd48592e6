package placement

import (
	"context"
	"fmt"

	"entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/metering"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/regionservice"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// Moved is where Move put a VM.
type Moved struct {
	VM           *ent.VirtualMachine
	From, To     int // node ids
	ToName       string
	FromName     string
	ClusterID    int
	AttemptsUsed int
}

// Move places a VM again, elsewhere, under the same rules as at creation (its tenant,
// region, flavor and schedule policy; a region service's other replicas count for
// spreading) and switches its allocation in the caller's transaction: the new node and the
// tenant's quota there are charged first, then what the VM held on its old node is given
// back. The tenant's quota is not checked: the VM is not new usage, and an operator's drain
// must not fail because a tenant is at its limit (the usage only changes host group when
// the new node is in another one). The VM's current node must be cordoned, which keeps it
// out of the decision. It acts as the system: the caller authorizes.
//
// The VM's zone, cluster and node change together (moves.go).
//
// When no other node fits the error is NO_CAPACITY and nothing was written, so the caller
// may go on with other VMs in the same transaction.
func (p *Placer) Move(ctx context.Context, client *ent.Client, vmID int) (*Moved, error) {
	var out *Moved
	own, err := inTx(ctx, client, func(t *txn) error {
		sys := system(ctx)
		vm, err := t.c.VirtualMachine.Query().Where(virtualmachine.ID(vmID)).
			WithTenant(func(q *ent.TenantQuery) { q.Select("id") }).
			WithRegion(func(q *ent.RegionQuery) { q.Select("id") }).
			WithFlavor(func(q *ent.FlavorQuery) { q.Select("id") }).
			WithNode().WithAvailabilityZone().
			WithRegionService(func(q *ent.RegionServiceQuery) { q.Select("id") }).
			Only(sys)
		if ent.IsNotFound(err) {
			return apierr.NotFound("virtual machine %d not found", vmID)
		}
		if err != nil {
			return fmt.Errorf("load VM %d: %w", vmID, err)
		}
		from := vm.Edges.Node
		if from == nil {
			return apierr.Validation("id", "virtual machine %s is not placed on a node", vm.Name)
		}
		if from.Schedulable {
			return apierr.Validation("id", "node %s must be cordoned before its VMs move", from.Name)
		}
		if svc := vm.Edges.RegionService; svc != nil {
			if err := t.take(ctx, rowKey{classService, svc.ID}); err != nil {
				return err
			}
		}
		if err := t.take(ctx, rowKey{classVM, vmID}); err != nil {
			return err
		}
		held, err := allocations(ctx, t.c, func(s *sql.Selector) { s.Where(sql.EQ(s.C(virtualmachine.FieldID), vmID)) })
		if err != nil {
			return err
		}
		f, err := loadFlavor(ctx, t.c, vm.Edges.Flavor.ID, "flavorID")
		if err != nil {
			return err
		}
		req := Request{TenantID: vm.Edges.Tenant.ID, RegionID: vm.Edges.Region.ID, Flavor: f, Count: 1,
			Policy: vm.SchedulePolicy, Move: true}
		if svc := vm.Edges.RegionService; svc != nil {
			if req.GroupNodeIDs, err = replicaNodes(sys, t.c, svc.ID, vmID); err != nil {
				return err
			}
		}
		if err := moveScope(ctx, t.c, vm, &req); err != nil {
			return err
		}
		placed, err := p.place(ctx, t, req)
		if err != nil {
			return err
		}
		to := placed.Decision.Placements[0].NodeID
		if err := t.release(ctx, held); err != nil {
			return err
		}
		mask, numa := placed.HeldBy(to)
		u := t.c.VirtualMachine.UpdateOneID(vmID).
			SetNodeID(to).SetClusterID(placed.Decision.ClusterID).
			SetAllocatedVcpus(f.Vcpus).SetAllocatedMemoryMB(f.MemoryMB).SetAllocatedDiskGB(f.DiskGB).
			SetExclusiveMask(mask)
		setNUMANode(u, numa)
		setZone(u, vm, placed.zoneOf(to))
		moved, err := u.Save(sys)
		if err != nil {
			return fmt.Errorf("move VM %d: %w", vmID, err)
		}
		if err := metering.ReopenVMs(ctx, t.c, p.cfg.Clock(), vmID); err != nil {
			return err
		}
		out = &Moved{VM: moved, From: from.ID, FromName: from.Name, To: to, ToName: placed.NodeName(to),
			ClusterID: placed.Decision.ClusterID, AttemptsUsed: placed.Attempts}
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

// replicaNodes are the nodes of a region service's other replicas, once per replica.
func replicaNodes(ctx context.Context, c *ent.Client, svcID, except int) ([]int, error) {
	var rows []struct {
		Node int `sql:"node_id"`
	}
	err := c.VirtualMachine.Query().
		Where(virtualmachine.HasRegionServiceWith(regionservice.ID(svcID)), virtualmachine.IDNEQ(except),
			virtualmachine.HasNodeWith(computenode.IDGT(0))).
		Modify(func(s *sql.Selector) { s.Select(sql.As(s.C(virtualmachine.NodeColumn), "node_id")) }).
		Scan(authz.Unrestricted(ctx), &rows)
	if err != nil {
		return nil, fmt.Errorf("nodes of region service %d: %w", svcID, err)
	}
	out := make([]int, len(rows))
	for i, r := range rows {
		out[i] = r.Node
	}
	return out, nil
}
