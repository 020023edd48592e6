package scheduler

import "fmt"

// Apply commits a decision to the snapshot in place, as the committer does to the
// database: each placement adds the flavor to its node's allocations (and takes dedicated
// cores for a dedicated flavor) and to the tenant's quota use in the node's host group,
// when the snapshot has a quota entry for it. It keeps a cached snapshot warm between
// decisions: it also updates the per-AZ CPU sums the snapshot's index keeps, so no
// AllocationsChanged call is needed after it. It fails, changing nothing, if a placement
// names a node that is not in the snapshot. Apply writes the snapshot: do not call it
// concurrently with Schedule on the same snapshot.
func (s *Snapshot) Apply(r Request, d Decision) error {
	if len(d.Placements) == 0 {
		return nil
	}
	ix := s.index()
	var buf [16]int32
	pos := buf[:0]
	for _, p := range d.Placements {
		i, ok := ix.position(s, p.NodeID)
		if !ok {
			return fmt.Errorf("apply: node %d is not in the snapshot", p.NodeID)
		}
		pos = append(pos, i)
	}
	f := r.Flavor
	for _, i := range pos {
		n := &s.Nodes[i]
		n.CPUAllocated += f.VCPUs
		ix.addUsedCPU(i, f.VCPUs)
		n.MemoryAllocatedMB += f.MemoryMB
		n.DiskAllocatedGB += f.DiskGB
		if f.Dedicated {
			n.DedicatedCoresFree -= f.VCPUs
		}
		k := QuotaKey{TenantID: r.TenantID, HostGroupID: n.HostGroupID}
		if q, ok := s.Quotas[k]; ok {
			q.UsedVCPUs += f.VCPUs
			q.UsedMemoryMB += f.MemoryMB
			q.UsedStorageGB += f.DiskGB
			s.Quotas[k] = q
		}
	}
	return nil
}
