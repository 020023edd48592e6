package scheduler

// QuotaFit rejects nodes whose host group would take the tenant over its quota: vCPUs,
// vCPUs as a percentage of the group's cores, memory and storage. The group's VMs placed
// so far count. Without a quota entry the node passes, unless Required.
type QuotaFit struct {
	Required bool
}

var _ Filter = (*QuotaFit)(nil)

// Name implements Filter.
func (QuotaFit) Name() string { return "Quota" }

// Filter implements Filter.
func (q QuotaFit) Filter(st *State, n *NodeView) Status {
	qt, ok := st.Quota(n.HostGroupID)
	if !ok {
		if q.Required {
			return Reject("NO_QUOTA", "tenant has no quota in the node's host group")
		}
		return Pass
	}
	f := st.Request.Flavor
	vcpus := qt.UsedVCPUs + f.VCPUs
	switch {
	case qt.VCPUs > 0 && vcpus > qt.VCPUs:
		return Reject("QUOTA_VCPUS", "vCPU quota exceeded")
	case qt.CPUPercent > 0 && qt.GroupCores > 0 &&
		float64(vcpus)*100 > qt.CPUPercent*float64(qt.GroupCores):
		return Reject("QUOTA_CPU_PERCENT", "CPU percent of the host group exceeded")
	case qt.MemoryMB > 0 && qt.UsedMemoryMB+f.MemoryMB > qt.MemoryMB:
		return Reject("QUOTA_MEMORY", "memory quota exceeded")
	case qt.StorageGB > 0 && qt.UsedStorageGB+f.DiskGB > qt.StorageGB:
		return Reject("QUOTA_STORAGE", "storage quota exceeded")
	}
	return Pass
}
