package placement

import (
	"context"
	"fmt"
	"slices"

	"entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/predicate"
	"github.com/virtflow/virtflow/ent/quota"
	"github.com/virtflow/virtflow/scheduler"
)

// usage is what VMs add to (or give back to) one node or quota row.
type usage struct {
	cpu       int
	mem, disk int64
}

func (u *usage) add(f scheduler.Flavor) {
	u.cpu += f.VCPUs
	u.mem += f.MemoryMB
	u.disk += f.DiskGB
}

// nodeUsage is what a commit adds to a node; dedicated and threads re-check whole cores.
type nodeUsage struct {
	usage
	dedicated bool
	threads   int
}

// quotaUsage is what a commit adds to a quota row; cores is the host group's physical
// cores for its CPU-percent limit.
type quotaUsage struct {
	usage
	cores int
}

// outcome is how a commit ended.
type outcome int

const (
	committed  outcome = iota
	nodeFull           // a node no longer had room
	quotaFull          // a quota no longer had room
	lockBusy           // a row could not be taken without waiting out of lock order
	nodeMissed         // a node of the decision is gone
)

// commit applies the decision's placements to the nodes and the tenant's quotas, each row
// only if it still has room (see the package comment); with checkQuota false (a move) the
// quota rows are charged whatever their limits. On anything but committed, the rows this
// attempt changed are put back and the caller decides again.
func (t *txn) commit(ctx context.Context, snap *Snapshot, r scheduler.Request, d scheduler.Decision, checkQuota bool) (outcome, error) {
	nodes := map[int]*nodeUsage{}
	quotas := map[int]*quotaUsage{}
	for _, p := range d.Placements {
		info, ok := snap.nodes[p.NodeID]
		if !ok {
			return nodeMissed, nil
		}
		n := nodes[p.NodeID]
		if n == nil {
			n = &nodeUsage{dedicated: r.Flavor.Dedicated, threads: info.threadsPerCore}
			nodes[p.NodeID] = n
		}
		n.add(r.Flavor)
		if q, ok := snap.quotas[scheduler.QuotaKey{TenantID: r.TenantID, HostGroupID: info.hostGroupID}]; ok {
			u := quotas[q.id]
			if u == nil {
				u = &quotaUsage{cores: q.groupCores}
				quotas[q.id] = u
			}
			u.add(r.Flavor)
		}
	}

	var undo []func(context.Context) error
	rollback := func(o outcome) (outcome, error) {
		for i := len(undo) - 1; i >= 0; i-- {
			if err := undo[i](ctx); err != nil {
				return o, err
			}
		}
		return o, nil
	}
	sys := system(ctx)
	for _, id := range sortedKeys(nodes) {
		u := nodes[id]
		k := rowKey{classNode, id}
		if busy, err := t.prepareWrite(ctx, k); err != nil || busy {
			if err != nil {
				return committed, err
			}
			return rollback(lockBusy)
		}
		n, err := t.c.ComputeNode.Update().Where(computenode.ID(id), nodeFits(u)).
			AddCPUAllocated(u.cpu).AddMemoryAllocatedMB(u.mem).AddDiskAllocatedGB(u.disk).Save(withRows(sys, snap.reserved, id))
		if err != nil {
			return committed, fmt.Errorf("allocate on node %d: %w", id, err)
		}
		if n == 0 {
			return rollback(nodeFull)
		}
		t.locks.hold(k)
		undo = append(undo, func(ctx context.Context) error {
			return t.c.ComputeNode.UpdateOneID(id).
				AddCPUAllocated(-u.cpu).AddMemoryAllocatedMB(-u.mem).AddDiskAllocatedGB(-u.disk).Exec(system(ctx))
		})
	}
	for _, id := range sortedKeys(quotas) {
		u := quotas[id]
		k := rowKey{classQuota, id}
		if busy, err := t.prepareWrite(ctx, k); err != nil || busy {
			if err != nil {
				return committed, err
			}
			return rollback(lockBusy)
		}
		q := t.c.Quota.Update().Where(quota.ID(id))
		if checkQuota {
			q.Where(quotaFits(u))
		}
		n, err := q.
			AddUsedVcpus(u.cpu).AddUsedMemoryMB(u.mem).AddUsedStorageGB(u.disk).Save(withRows(sys, snap.reserved, id))
		if err != nil {
			return committed, fmt.Errorf("use quota %d: %w", id, err)
		}
		if n == 0 {
			return rollback(quotaFull)
		}
		t.locks.hold(k)
		undo = append(undo, func(ctx context.Context) error {
			return t.c.Quota.UpdateOneID(id).
				AddUsedVcpus(-u.cpu).AddUsedMemoryMB(-u.mem).AddUsedStorageGB(-u.disk).Exec(system(ctx))
		})
	}
	return committed, nil
}

func sortedKeys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// fits is the SQL condition "used + n <= limit".
func fits(used string, n any, limit string) *sql.Predicate {
	return sql.P(func(b *sql.Builder) {
		b.WriteString(used).WriteOp(sql.OpAdd).Arg(n).WriteOp(sql.OpLTE).WriteString(limit)
	})
}

// nodeFits keeps a node row only if u still fits its capacity; for a dedicated flavor,
// also its whole free cores: ((capacity - allocated) / threads) * threads >= u.cpu, the
// rule of dedicatedFree.
func nodeFits(u *nodeUsage) predicate.ComputeNode {
	return func(s *sql.Selector) {
		s.Where(sql.And(
			fits(s.C(computenode.FieldCPUAllocated), u.cpu, s.C(computenode.FieldCPUCapacity)),
			fits(s.C(computenode.FieldMemoryAllocatedMB), u.mem, s.C(computenode.FieldMemoryCapacityMB)),
			fits(s.C(computenode.FieldDiskAllocatedGB), u.disk, s.C(computenode.FieldDiskCapacityGB)),
		))
		if u.dedicated {
			s.Where(sql.P(func(b *sql.Builder) {
				b.WriteString("((").WriteString(s.C(computenode.FieldCPUCapacity)).WriteOp(sql.OpSub).
					WriteString(s.C(computenode.FieldCPUAllocated)).WriteString(") / ").Arg(u.threads).
					WriteString(") * ").Arg(u.threads).WriteOp(sql.OpGTE).Arg(u.cpu)
			}))
		}
	}
}

// quotaFits keeps a quota row only if every non-zero limit still holds with u added: vCPUs,
// vCPUs as a percentage of the group's cores (when the group has cores, as the scheduler
// checks), memory and storage.
func quotaFits(u *quotaUsage) predicate.Quota {
	return func(s *sql.Selector) {
		unlimitedOr := func(limit string, p *sql.Predicate) *sql.Predicate {
			return sql.Or(sql.EQ(limit, 0), p)
		}
		used, vcpus := s.C(quota.FieldUsedVcpus), s.C(quota.FieldVcpus)
		preds := []*sql.Predicate{
			unlimitedOr(vcpus, fits(used, u.cpu, vcpus)),
			unlimitedOr(s.C(quota.FieldMemoryMB), fits(s.C(quota.FieldUsedMemoryMB), u.mem, s.C(quota.FieldMemoryMB))),
			unlimitedOr(s.C(quota.FieldStorageGB), fits(s.C(quota.FieldUsedStorageGB), u.disk, s.C(quota.FieldStorageGB))),
		}
		if u.cores > 0 {
			percent := s.C(quota.FieldCPUPercent)
			preds = append(preds, unlimitedOr(percent, sql.P(func(b *sql.Builder) {
				b.WriteString("(").WriteString(used).WriteOp(sql.OpAdd).Arg(u.cpu).WriteString(") * 100").
					WriteOp(sql.OpLTE).WriteString(percent).WriteOp(sql.OpMul).Arg(u.cores)
			})))
		}
		s.Where(sql.And(preds...))
	}
}
