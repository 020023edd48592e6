package placement

import (
	"context"
	"fmt"
	"slices"

	"entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/domain/scheduler"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/ent/hostgroup"
	"github.com/virtflow/virtflow/ent/predicate"
	"github.com/virtflow/virtflow/ent/quota"
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
	// exclusive is the flavor's exclusivity; take is the bit of exclusive_mask it takes
	// (ExclusiveHostBit or a NUMA node's NUMABit; 0 for a shared flavor).
	exclusive scheduler.Exclusivity
	take      int64
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
// quota rows are charged whatever their limits. Which quota each node counts in, and its
// group's cores, are read in the transaction (quotasOf), after the node rows are taken,
// whatever the snapshot knows: a snapshot from a cache that has not seen a quota yet must
// not let a placement past it. With requireQuota, a node in no quota of the tenant refuses.
// On anything but committed, the rows this attempt changed are put back and the caller
// decides again; quotaIDs are the quota rows the attempt found (for the cache to read again).
//
// An exclusive flavor's VM takes a bit of its node's exclusive_mask in the same conditional
// update (nodeFits): the whole host, only when nothing is allocated or held there; a NUMA
// node, only when no other exclusive VM holds it or the host and the host holds no shared
// VM. A shared flavor's VM needs a mask of 0. held returns the bit taken per node.
func (t *txn) commit(ctx context.Context, snap *Snapshot, r scheduler.Request, d scheduler.Decision, checkQuota, requireQuota bool) (o outcome, quotaIDs []int, held map[int]int64, err error) {
	nodes := map[int]*nodeUsage{}
	for _, p := range d.Placements {
		info, ok := snap.nodes[p.NodeID]
		if !ok {
			return nodeMissed, nil, nil, nil
		}
		n := nodes[p.NodeID]
		if n == nil {
			n = &nodeUsage{dedicated: r.Flavor.Dedicated, threads: info.threadsPerCore, exclusive: r.Flavor.Exclusive}
			nodes[p.NodeID] = n
		} else if r.Flavor.Exclusive != scheduler.ExclusiveNone {
			return nodeFull, nil, nil, nil // one exclusive VM per node and decision
		}
		n.add(r.Flavor)
		switch r.Flavor.Exclusive {
		case scheduler.ExclusiveHost:
			n.take = scheduler.ExclusiveHostBit
		case scheduler.ExclusiveNUMANode:
			cells := snap.cells
			if cells == nil {
				cells = numaCells(&snap.Snapshot, r, d, snap.pos)
			}
			cell, ok := cells[p.NodeID]
			if !ok {
				return nodeFull, nil, nil, nil
			}
			n.take = scheduler.NUMABit(cell)
		}
	}

	var undo []func(context.Context) error
	rollback := func(o outcome) (outcome, []int, map[int]int64, error) {
		for i := len(undo) - 1; i >= 0; i-- {
			if err := undo[i](ctx); err != nil {
				return o, quotaIDs, nil, err
			}
		}
		return o, quotaIDs, nil, nil
	}
	sys := system(ctx)
	for _, id := range sortedKeys(nodes) {
		u := nodes[id]
		k := rowKey{classNode, id}
		if busy, err := t.prepareWrite(ctx, k); err != nil || busy {
			if err != nil {
				return committed, nil, nil, err
			}
			return rollback(lockBusy)
		}
		// The bit taken is not set (nodeFits), so adding it sets it.
		n, err := t.c.ComputeNode.Update().Where(computenode.ID(id), nodeFits(u)).
			AddCPUAllocated(u.cpu).AddMemoryAllocatedMB(u.mem).AddDiskAllocatedGB(u.disk).AddExclusiveMask(u.take).
			Save(withRows(sys, snap.reserved, id))
		if err != nil {
			return committed, nil, nil, fmt.Errorf("allocate on node %d: %w", id, err)
		}
		// Held either way: an UPDATE that waited for a concurrent one and then found its
		// condition false keeps the row locked (PostgreSQL locks the newest version before
		// it re-checks), so later rows of this transaction must respect the lock order.
		t.locks.hold(k)
		if n == 0 {
			return rollback(nodeFull)
		}
		if u.take != 0 {
			if held == nil {
				held = map[int]int64{}
			}
			held[id] = u.take
		}
		undo = append(undo, func(ctx context.Context) error {
			return t.c.ComputeNode.UpdateOneID(id).
				AddCPUAllocated(-u.cpu).AddMemoryAllocatedMB(-u.mem).AddDiskAllocatedGB(-u.disk).AddExclusiveMask(-u.take).Exec(system(ctx))
		})
	}
	// The quota rows, read now: a SetQuota that committed while this transaction waited for
	// a node row is seen (SetQuota takes the group's node rows before it writes the quota).
	applies, err := quotasOf(sys, t.c, r.TenantID, sortedKeys(nodes))
	if err != nil {
		return committed, nil, nil, err
	}
	quotas := map[int]*quotaUsage{}
	for _, p := range d.Placements {
		q, ok := applies[p.NodeID]
		if !ok {
			if checkQuota && requireQuota {
				return rollback(quotaFull)
			}
			continue
		}
		u := quotas[q.QuotaID]
		if u == nil {
			u = &quotaUsage{cores: q.Cores}
			quotas[q.QuotaID] = u
			quotaIDs = append(quotaIDs, q.QuotaID)
		}
		u.add(r.Flavor)
	}
	for _, id := range sortedKeys(quotas) {
		u := quotas[id]
		k := rowKey{classQuota, id}
		if busy, err := t.prepareWrite(ctx, k); err != nil || busy {
			if err != nil {
				return committed, nil, nil, err
			}
			return rollback(lockBusy)
		}
		q := t.c.Quota.Update().Where(quota.ID(id))
		if checkQuota {
			q.Where(quotaFits(u))
		}
		// Reserved in this process's cache only when the decision's snapshot knew the row.
		_, known := snap.quotas[scheduler.QuotaKey{TenantID: r.TenantID, HostGroupID: groupOf(applies, id)}]
		n, err := q.
			AddUsedVcpus(u.cpu).AddUsedMemoryMB(u.mem).AddUsedStorageGB(u.disk).Save(withRows(sys, snap.reserved && known, id))
		if err != nil {
			return committed, nil, nil, fmt.Errorf("use quota %d: %w", id, err)
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
	return committed, quotaIDs, held, nil
}

func sortedKeys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// nodeQuota is the tenant's quota row a node counts in, with the row's host group and the
// group's physical cores.
type nodeQuota struct {
	NodeID  int `sql:"node_id"`
	QuotaID int `sql:"quota_id"`
	GroupID int `sql:"group_id"`
	Cores   int `sql:"cores"`
}

// quotasOf reads, in one query, the quota of the tenant that each of the nodes counts in:
// the lowest-id host group of the node's host that has a quota for the tenant
// (hostGroupFor), with that group's cores (0 when the quota has no CPU-percent limit). Nodes
// in no such group are absent.
func quotasOf(ctx context.Context, c *ent.Client, tenantID int, nodeIDs []int) (map[int]nodeQuota, error) {
	var rows []nodeQuota
	err := c.HostGroup.Query().Modify(func(s *sql.Selector) {
		hgh, cn := sql.Table(hostgroup.HostsTable).As("hgh"), sql.Table(computenode.Table).As("cn")
		q := sql.Table(quota.Table).As("q")
		s.Join(hgh).On(s.C(hostgroup.FieldID), hgh.C(hostgroup.HostsPrimaryKey[0]))
		s.Join(cn).On(hgh.C(hostgroup.HostsPrimaryKey[1]), cn.C(computenode.HostColumn))
		s.Join(q).On(q.C(quota.HostGroupColumn), s.C(hostgroup.FieldID))
		s.Where(sql.And(sql.InInts(cn.C(computenode.FieldID), nodeIDs...), sql.EQ(q.C(quota.TenantColumn), tenantID)))
		s.Select()
		s.AppendSelectAs(cn.C(computenode.FieldID), "node_id")
		s.AppendSelectAs(q.C(quota.FieldID), "quota_id")
		s.AppendSelectAs(s.C(hostgroup.FieldID), "group_id")
		// The group's cores matter only to a CPU-percent limit (quotaFits): a quota without
		// one (0) is not made to sum every host of its group.
		s.AppendSelectExprAs(sql.Expr(fmt.Sprintf(
			"CASE WHEN %s > 0 THEN (SELECT COALESCE(SUM(h.%s), 0) FROM %s AS x JOIN %s AS h ON x.%s = h.%s WHERE x.%s = %s) ELSE 0 END",
			q.C(quota.FieldCPUPercent), host.FieldCPUCores, hostgroup.HostsTable, host.Table, hostgroup.HostsPrimaryKey[1], host.FieldID,
			hostgroup.HostsPrimaryKey[0], s.C(hostgroup.FieldID))), "cores")
		s.OrderBy(cn.C(computenode.FieldID), s.C(hostgroup.FieldID))
	}).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("read quotas of nodes: %w", err)
	}
	out := make(map[int]nodeQuota, len(nodeIDs))
	for _, r := range rows {
		if _, ok := out[r.NodeID]; !ok { // the lowest group first
			out[r.NodeID] = r
		}
	}
	return out, nil
}

// groupOf is the host group of quota id among applies, 0 when absent.
func groupOf(applies map[int]nodeQuota, id int) int {
	for _, q := range applies {
		if q.QuotaID == id {
			return q.GroupID
		}
	}
	return 0
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
		s.Where(exclusiveFits(s, u))
		if u.dedicated {
			s.Where(sql.P(func(b *sql.Builder) {
				b.WriteString("((").WriteString(s.C(computenode.FieldCPUCapacity)).WriteOp(sql.OpSub).
					WriteString(s.C(computenode.FieldCPUAllocated)).WriteString(") / ").Arg(u.threads).
					WriteString(") * ").Arg(u.threads).WriteOp(sql.OpGTE).Arg(u.cpu)
			}))
		}
	}
}

// numaCells chooses, for an exclusive NUMA_NODE request, the NUMA node each placement takes
// on its node (scheduler.FreeNUMANode on the decision's snapshot; pos finds a node in
// s.Nodes); nil for other requests.
func numaCells(s *scheduler.Snapshot, r scheduler.Request, d scheduler.Decision, pos func(int) (int, bool)) map[int]int {
	if r.Flavor.Exclusive != scheduler.ExclusiveNUMANode {
		return nil
	}
	cells := map[int]int{}
	for _, p := range d.Placements {
		if i, ok := pos(p.NodeID); ok {
			if cell, ok := scheduler.FreeNUMANode(r.Flavor, &s.Nodes[i]); ok {
				cells[p.NodeID] = cell
			}
		}
	}
	return cells
}

// takeOf is the exclusive_mask bit a VM of f placed on node takes (cells from numaCells).
func takeOf(f scheduler.Flavor, cells map[int]int, node int) int64 {
	switch f.Exclusive {
	case scheduler.ExclusiveHost:
		return scheduler.ExclusiveHostBit
	case scheduler.ExclusiveNUMANode:
		if cell, ok := cells[node]; ok {
			return scheduler.NUMABit(cell)
		}
	}
	return 0
}

// exclusiveFits is the exclusivity half of nodeFits, the rule of scheduler.ExclusiveFit:
// a shared flavor needs exclusive_mask = 0; HOST needs it 0 and nothing allocated; a NUMA
// node's bit needs neither it nor the host's bit set, and a node holding nothing exclusive
// must hold nothing at all (no shared VM shares a host with NUMA_NODE VMs).
func exclusiveFits(s *sql.Selector, u *nodeUsage) *sql.Predicate {
	mask := s.C(computenode.FieldExclusiveMask)
	empty := sql.And(sql.EQ(s.C(computenode.FieldCPUAllocated), 0), sql.EQ(s.C(computenode.FieldMemoryAllocatedMB), 0),
		sql.EQ(s.C(computenode.FieldDiskAllocatedGB), 0))
	switch u.exclusive {
	case scheduler.ExclusiveHost:
		return sql.And(sql.EQ(mask, 0), empty)
	case scheduler.ExclusiveNUMANode:
		free := sql.P(func(b *sql.Builder) {
			b.WriteString("(").WriteString(mask).WriteString(" & ").Arg(scheduler.ExclusiveHostBit | u.take).WriteString(") = 0")
		})
		return sql.And(free, sql.Or(sql.NEQ(mask, 0), empty))
	}
	return sql.EQ(mask, 0)
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
