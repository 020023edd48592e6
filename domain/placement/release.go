package placement

import (
	"context"
	"fmt"

	"entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/scheduler"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/flavor"
	"github.com/virtflow/virtflow/ent/quota"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// allocation is what a placed VM holds on its node, counted in its tenant's quota of the
// node's host group: the size placement charged (the VM's allocated_* columns), so a flavor
// edited after placement never makes a release drift.
type allocation struct {
	VM        int    `sql:"id"`
	Name      string `sql:"name"`
	Node      int    `sql:"node_id"`
	Tenant    int    `sql:"tenant_id"`
	VCPUs     int    `sql:"vcpus"`
	MemoryMB  int64  `sql:"memory_mb"`
	DiskGB    int64  `sql:"disk_gb"`
	CPUPolicy string `sql:"cpu_policy"`
	// Exclusive is what the VM holds of its node's exclusive_mask.
	Exclusive int64 `sql:"exclusive_mask"`
}

func (a allocation) flavor() scheduler.Flavor {
	return scheduler.Flavor{VCPUs: a.VCPUs, MemoryMB: a.MemoryMB, DiskGB: a.DiskGB,
		Dedicated: a.CPUPolicy == flavor.CPUPolicyDedicated.String()}
}

// allocations reads what the VMs hold, in one query, whoever may see them; VMs never
// placed have Node 0. Ordered by VM id.
func allocations(ctx context.Context, c *ent.Client, where func(*sql.Selector)) ([]allocation, error) {
	var out []allocation
	err := c.VirtualMachine.Query().Where(where).Modify(func(s *sql.Selector) {
		f := sql.Table(flavor.Table).As("f")
		s.Join(f).On(s.C(virtualmachine.FlavorColumn), f.C(flavor.FieldID))
		s.Select(s.Columns(virtualmachine.FieldID, virtualmachine.FieldName)...)
		s.AppendSelectExprAs(sql.Expr(fmt.Sprintf("COALESCE(%s, 0)", s.C(virtualmachine.NodeColumn))), "node_id")
		s.AppendSelectAs(s.C(virtualmachine.TenantColumn), "tenant_id")
		s.AppendSelectAs(s.C(virtualmachine.FieldAllocatedVcpus), "vcpus")
		s.AppendSelectAs(s.C(virtualmachine.FieldAllocatedMemoryMB), "memory_mb")
		s.AppendSelectAs(s.C(virtualmachine.FieldAllocatedDiskGB), "disk_gb")
		s.AppendSelectAs(s.C(virtualmachine.FieldExclusiveMask), "exclusive_mask")
		s.AppendSelect(f.C(flavor.FieldCPUPolicy))
		s.OrderBy(s.C(virtualmachine.FieldID))
	}).Scan(authz.Unrestricted(ctx), &out)
	if err != nil {
		return nil, fmt.Errorf("read allocations of VMs: %w", err)
	}
	return out, nil
}

// release gives what the VMs held back to their nodes and their tenants' quotas, in lock
// order, never below zero. The VMs are deleted (or being deleted) in the same transaction.
func (t *txn) release(ctx context.Context, as []allocation) error {
	nodes := map[int]*usage{}
	masks := map[int]int64{} // the exclusive_mask bits given back per node
	var nodeIDs []int
	tenants := map[int]bool{}
	for _, a := range as {
		if a.Node == 0 {
			continue
		}
		if nodes[a.Node] == nil {
			nodes[a.Node] = &usage{}
			nodeIDs = append(nodeIDs, a.Node)
		}
		nodes[a.Node].add(a.flavor())
		masks[a.Node] |= a.Exclusive
		tenants[a.Tenant] = true
	}
	if len(nodes) == 0 {
		return nil
	}
	// The quota row of each VM: its tenant's quota in its node's host group (hostGroupFor).
	groups, err := nodeGroups(ctx, t.c, nodeIDs)
	if err != nil {
		return err
	}
	var rows []quotaRow
	err = t.c.Quota.Query().
		Where(func(s *sql.Selector) { s.Where(sql.InInts(s.C(quota.TenantColumn), sortedKeys(tenants)...)) }).
		Modify(selectQuotaRow).Scan(authz.Unrestricted(ctx), &rows)
	if err != nil {
		return fmt.Errorf("read quotas: %w", err)
	}
	type tg struct{ tenant, group int }
	quotaOf := map[tg]int{}
	withQuota := map[int]map[int]bool{}
	for _, q := range rows {
		quotaOf[tg{q.TenantID, q.GroupID}] = q.ID
		if withQuota[q.TenantID] == nil {
			withQuota[q.TenantID] = map[int]bool{}
		}
		withQuota[q.TenantID][q.GroupID] = true
	}
	quotas := map[int]*usage{}
	for _, a := range as {
		if a.Node == 0 {
			continue
		}
		if id, ok := quotaOf[tg{a.Tenant, hostGroupFor(groups[a.Node], withQuota[a.Tenant])}]; ok {
			if quotas[id] == nil {
				quotas[id] = &usage{}
			}
			quotas[id].add(a.flavor())
		}
	}

	sys := system(ctx)
	for _, id := range sortedKeys(nodes) {
		u := nodes[id]
		if err := t.ready(ctx, rowKey{classNode, id}); err != nil {
			return err
		}
		err := t.c.ComputeNode.UpdateOneID(id).Modify(func(b *sql.UpdateBuilder) {
			b.Set(computenode.FieldCPUAllocated, minus(computenode.FieldCPUAllocated, u.cpu))
			b.Set(computenode.FieldMemoryAllocatedMB, minus(computenode.FieldMemoryAllocatedMB, u.mem))
			b.Set(computenode.FieldDiskAllocatedGB, minus(computenode.FieldDiskAllocatedGB, u.disk))
			if m := masks[id]; m != 0 {
				b.Set(computenode.FieldExclusiveMask, clearBits(computenode.FieldExclusiveMask, m))
			}
		}).Exec(sys)
		if err != nil && !ent.IsNotFound(err) {
			return fmt.Errorf("free node %d: %w", id, err)
		}
		t.locks.hold(rowKey{classNode, id})
	}
	for _, id := range sortedKeys(quotas) {
		u := quotas[id]
		if err := t.ready(ctx, rowKey{classQuota, id}); err != nil {
			return err
		}
		err := t.c.Quota.UpdateOneID(id).Modify(func(b *sql.UpdateBuilder) {
			b.Set(quota.FieldUsedVcpus, minus(quota.FieldUsedVcpus, u.cpu))
			b.Set(quota.FieldUsedMemoryMB, minus(quota.FieldUsedMemoryMB, u.mem))
			b.Set(quota.FieldUsedStorageGB, minus(quota.FieldUsedStorageGB, u.disk))
		}).Exec(sys)
		if err != nil && !ent.IsNotFound(err) {
			return fmt.Errorf("free quota %d: %w", id, err)
		}
		t.locks.hold(rowKey{classQuota, id})
	}
	return nil
}

// minus is "CASE WHEN col > n THEN col - n ELSE 0 END": a usage counter never goes below
// zero, even if it drifted.
func minus(col string, n any) sql.Querier {
	return sql.ExprFunc(func(b *sql.Builder) {
		b.WriteString("CASE WHEN ").Ident(col).WriteOp(sql.OpGT).Arg(n).
			WriteString(" THEN ").Ident(col).WriteOp(sql.OpSub).Arg(n).WriteString(" ELSE 0 END")
	})
}

// clearBits is "col & ~mask": the exclusive_mask with the bits of mask cleared.
func clearBits(col string, mask int64) sql.Querier {
	return sql.ExprFunc(func(b *sql.Builder) {
		b.Ident(col).WriteString(" & ").Arg(^mask)
	})
}

// nodeGroups maps nodes to their host's groups, ascending, whoever may see them.
func nodeGroups(ctx context.Context, c *ent.Client, nodeIDs []int) (map[int][]int, error) {
	return groupsOfNodes(authz.Unrestricted(ctx), c, func(cn *sql.SelectTable) *sql.Predicate {
		return sql.InInts(cn.C(computenode.FieldID), nodeIDs...)
	})
}

// ready makes writing k next safe for the lock order: nothing to do in order (the write
// takes the lock), otherwise take it first.
func (t *txn) ready(ctx context.Context, k rowKey) error {
	if !t.locks.outOfOrder(k) {
		return nil
	}
	return t.take(ctx, k)
}

// take locks k for the rest of the transaction, waiting in lock order; out of order it
// tries without waiting, again and again for a while, and gives up with CONFLICT.
func (t *txn) take(ctx context.Context, k rowKey) error {
	for attempt := 1; ; attempt++ {
		_, busy, err := t.lockRow(ctx, k)
		if err != nil || !busy {
			return err
		}
		if attempt == 40 {
			return apierr.Conflict("a concurrent change holds what this one needs; try again")
		}
		if err := sleep(ctx, min(attempt, 10)); err != nil {
			return err
		}
	}
}
