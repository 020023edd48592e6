package scheduler

import (
	"runtime"
	"testing"
	"time"
)

// benchFleet is 5,000 hosts in one cluster: 125 racks of 40, 25 power zones (5 racks
// each), 25 network zones striped across racks so they do not line up with them, 3 AZs
// and 5 host groups; every host 20% full.
func benchFleet() *Snapshot {
	s := &Snapshot{Clusters: []Cluster{{ID: 1, Name: "c1", Region: "eu", Weight: 1}}}
	s.Nodes = make([]Node, 5000)
	for i := range s.Nodes {
		rack := i / 40
		power := rack / 5
		s.Nodes[i] = Node{
			ID: i + 1, Name: "h" + itoa(i+1), ClusterID: 1, Ready: true, Schedulable: true,
			Providers:        []string{"libvirt"},
			Labels:           map[string]string{"gen": []string{"g1", "g2"}[i%2]},
			AvailabilityZone: "az" + itoa(power%3),
			RackZone:         "r" + itoa(rack), PowerZone: "p" + itoa(power), NetworkZone: "n" + itoa(i%25),
			HostGroupID: rack / 25,
			CPUCapacity: 64, CPUAllocated: 13,
			MemoryMB: 262144, MemoryAllocatedMB: 52429,
			DiskGB: 4000, DiskAllocatedGB: 800,
			DedicatedCoresFree: 16,
		}
	}
	return s
}

// apply commits a decision to the snapshot in place, as the committer would.
func apply(s *Snapshot, r Request, d Decision) {
	f := r.Flavor
	for _, p := range d.Placements {
		n := &s.Nodes[p.NodeID-1]
		n.CPUAllocated += f.VCPUs
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
}

// runWorkload schedules and applies every request, once per b.N, and reports
// decisions/s, ns/decision and allocs/decision (the snapshot build is not counted).
func runWorkload(b *testing.B, setup func() *Snapshot, reqs []Request, cfg Config) {
	var elapsed time.Duration
	var mallocs uint64
	decisions := 0
	for range b.N {
		b.StopTimer()
		s := setup()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		b.StartTimer()
		start := time.Now()
		for _, r := range reqs {
			d, err := Schedule(s, r, cfg)
			if err != nil {
				b.Fatalf("decision %d: %v", decisions, err)
			}
			if len(d.Placements) != max(r.Count, 1) {
				b.Fatalf("decision %d placed %d of %d", decisions, len(d.Placements), r.Count)
			}
			apply(s, r, d)
			decisions++
		}
		elapsed += time.Since(start)
		b.StopTimer()
		runtime.ReadMemStats(&m1)
		mallocs += m1.Mallocs - m0.Mallocs
		b.StartTimer()
	}
	b.ReportMetric(float64(decisions)/elapsed.Seconds(), "decisions/s")
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(decisions), "ns/decision")
	b.ReportMetric(float64(mallocs)/float64(decisions), "allocs/decision")
}

var benchFlavors = []Flavor{
	{VCPUs: 1, MemoryMB: 2048, DiskGB: 20},
	{VCPUs: 2, MemoryMB: 4096, DiskGB: 40},
	{VCPUs: 4, MemoryMB: 16384, DiskGB: 80},
	{VCPUs: 8, MemoryMB: 32768, DiskGB: 160},
	{VCPUs: 4, MemoryMB: 8192, DiskGB: 50, Dedicated: true},
}

// BenchmarkSingleVM: 10,000 single-VM placements of mixed flavors.
func BenchmarkSingleVM(b *testing.B) {
	reqs := make([]Request, 10000)
	for i := range reqs {
		reqs[i] = Request{TenantID: 1 + i%50, Region: "eu", Provider: "libvirt", Flavor: benchFlavors[i%len(benchFlavors)],
			Policy: Policy{NodeLabelSoftAffinities: map[string]string{"gen": "g2"}}}
	}
	runBoth(b, benchFleet, reqs, DefaultConfig())
}

// runBoth runs the workload explaining every node (the default) and Quiet.
func runBoth(b *testing.B, setup func() *Snapshot, reqs []Request, cfg Config) {
	b.Run("explain", func(b *testing.B) { runWorkload(b, setup, reqs, cfg) })
	cfg.Quiet = true
	b.Run("quiet", func(b *testing.B) { runWorkload(b, setup, reqs, cfg) })
}

func antiAffinityGroups(tenant int) []Request {
	zones := []ZoneRule{
		{Kind: ZoneRack, Mode: ZoneAntiAffinity},
		{Kind: ZonePower, Mode: ZoneAntiAffinity},
		{Kind: ZoneNetwork, Mode: ZoneAntiAffinity},
	}
	reqs := make([]Request, 200)
	for i := range reqs {
		reqs[i] = Request{TenantID: tenant, Region: "eu", Provider: "libvirt", Count: 10,
			Flavor: benchFlavors[i%4], Policy: Policy{Zones: zones}}
	}
	return reqs
}

// BenchmarkAntiAffinityGroups: 2,000 VMs in 200 groups of 10, hard anti-affinity on
// rack, power zone and network zone.
func BenchmarkAntiAffinityGroups(b *testing.B) {
	runBoth(b, benchFleet, antiAffinityGroups(1), DefaultConfig())
}

// BenchmarkAntiAffinityGroupsQuota is BenchmarkAntiAffinityGroups with a tenant quota
// in every host group (required), roomy enough for the whole workload.
func BenchmarkAntiAffinityGroupsQuota(b *testing.B) {
	setup := func() *Snapshot {
		s := benchFleet()
		s.Quotas = map[QuotaKey]Quota{}
		for hg := range 5 {
			s.Quotas[QuotaKey{TenantID: 1, HostGroupID: hg}] = Quota{
				VCPUs: 20000, CPUPercent: 50, GroupCores: 1000 * 64,
				MemoryMB: 64 << 20, StorageGB: 1 << 20,
			}
		}
		return s
	}
	cfg := DefaultConfig()
	cfg.RequireQuota = true
	runBoth(b, setup, antiAffinityGroups(1), cfg)
}
