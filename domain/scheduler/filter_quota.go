package scheduler

// QuotaFit rejects nodes whose host group would take the tenant over its quota: vCPUs,
// vCPUs as a percentage of the group's cores, memory and storage. The group's VMs placed
// so far count. Without a quota entry the node passes, unless Required.
type QuotaFit struct {
	Required bool
}

var _ Filter = (*QuotaFit)(nil)

var (
	statusNoQuota         = known("NO_QUOTA", "tenant has no quota in the node's host group")
	statusQuotaVCPUs      = known("QUOTA_VCPUS", "vCPU quota exceeded")
	statusQuotaCPUPercent = known("QUOTA_CPU_PERCENT", "CPU percent of the host group exceeded")
	statusQuotaMemory     = known("QUOTA_MEMORY", "memory quota exceeded")
	statusQuotaStorage    = known("QUOTA_STORAGE", "storage quota exceeded")
)

// Name implements Filter.
func (QuotaFit) Name() string { return "Quota" }

// verdict is the filter's answer for every node of a host group.
func (q QuotaFit) verdict(st *state, hostGroupID int) knownStatus {
	qt, ok := st.quotaOf(hostGroupID)
	if !ok {
		if q.Required {
			return statusNoQuota
		}
		return knownStatus{}
	}
	f := st.Request.Flavor
	vcpus := qt.UsedVCPUs + f.VCPUs
	switch {
	case qt.VCPUs > 0 && vcpus > qt.VCPUs:
		return statusQuotaVCPUs
	case qt.CPUPercent > 0 && qt.GroupCores > 0 &&
		float64(vcpus)*100 > qt.CPUPercent*float64(qt.GroupCores):
		return statusQuotaCPUPercent
	case qt.MemoryMB > 0 && qt.UsedMemoryMB+f.MemoryMB > qt.MemoryMB:
		return statusQuotaMemory
	case qt.StorageGB > 0 && qt.UsedStorageGB+f.DiskGB > qt.StorageGB:
		return statusQuotaStorage
	}
	return knownStatus{}
}

// prepareFilter skips the filter when nothing can fail; verdicts are then computed once
// per host group and placement.
func (q QuotaFit) prepareFilter(a *attempt) bool {
	if !q.Required && len(a.st.Snapshot.Quotas) == 0 {
		return false
	}
	a.hgVerdict = grow(a.hgVerdict, len(a.ix.hgIDs))
	a.hgStamp = grow(a.hgStamp, len(a.ix.hgIDs))
	clear(a.hgStamp)
	return true
}

func (q QuotaFit) filterBatch(a *attempt, fi int, cand []int32) []int32 {
	n, hg, pos, stamp, verdict, gen := 0, a.ix.hg, a.pos, a.hgStamp, a.hgVerdict, a.gen
	for _, c := range cand {
		h := hg[pos[c]]
		if stamp[h] != gen {
			verdict[h] = q.verdict(&a.st, a.ix.hgIDs[h])
			stamp[h] = gen
		}
		if st := &verdict[h]; st.Code != "" {
			a.reject(c, fi, st.id)
			continue
		}
		cand[n] = c
		n++
	}
	return cand[:n]
}

// stable is false: the verdict depends on the group's quota use.
func (QuotaFit) stable() bool { return false }
