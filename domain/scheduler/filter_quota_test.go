package scheduler

import "testing"

func TestQuotaFit(t *testing.T) {
	n := with(bigNode(1), func(n *Node) { n.HostGroupID = 7 })
	req := Request{TenantID: 3, Flavor: Flavor{VCPUs: 4, MemoryMB: 8192, DiskGB: 100}}
	quota := func(q Quota) map[QuotaKey]Quota { return map[QuotaKey]Quota{{TenantID: 3, HostGroupID: 7}: q} }
	runFilterCases(t, QuotaFit{}, []filterCase{
		{name: "no quota entry", node: n, req: req},
		{name: "other tenant's quota does not apply", node: n, req: req,
			quotas: map[QuotaKey]Quota{{TenantID: 4, HostGroupID: 7}: {VCPUs: 1}}},
		{name: "fits", node: n, req: req, quotas: quota(Quota{VCPUs: 8, UsedVCPUs: 4, MemoryMB: 16384, StorageGB: 100})},
		{name: "vcpus", node: n, req: req, quotas: quota(Quota{VCPUs: 8, UsedVCPUs: 5}), want: "QUOTA_VCPUS"},
		{name: "group counts", node: n, req: req, quotas: quota(Quota{VCPUs: 8, UsedVCPUs: 0}),
			placed: []Node{n, n}, want: "QUOTA_VCPUS"},
		{name: "cpu percent fits", node: n, req: req, quotas: quota(Quota{CPUPercent: 50, GroupCores: 16, UsedVCPUs: 4})},
		{name: "cpu percent over", node: n, req: req, quotas: quota(Quota{CPUPercent: 50, GroupCores: 16, UsedVCPUs: 5}),
			want: "QUOTA_CPU_PERCENT"},
		{name: "memory", node: n, req: req, quotas: quota(Quota{MemoryMB: 8192, UsedMemoryMB: 1}), want: "QUOTA_MEMORY"},
		{name: "storage", node: n, req: req, quotas: quota(Quota{StorageGB: 150, UsedStorageGB: 51}), want: "QUOTA_STORAGE"},
	})
	t.Run("required", func(t *testing.T) {
		a := testAttempt(n, req, nil, nil, nil, []Filter{QuotaFit{Required: true}}, nil)
		if got := filterStatus(a, 0); got.Code != "NO_QUOTA" {
			t.Fatalf("got %q, want NO_QUOTA", got.Code)
		}
	})
}
