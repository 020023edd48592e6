package hypervisor

import (
	"errors"
	"testing"
)

// TestCPUAndIOLimits: a shared flavor's CPU-time limit becomes <cputune> period/quota, the
// CPUs left to shared VMs <vcpu cpuset>, and a disk's IO limits <iotune>; pinned domains
// keep their vcpupin and ignore the shared set.
func TestCPUAndIOLimits(t *testing.T) {
	spec := DomainSpec{VMID: 3, VCPUs: 2, MemoryMiB: 512, CPUQuotaPercent: 50, SharedCPUs: []int{7, 4, 5, 6, 0, 4},
		Disks: []Disk{{Path: "/v/a.qcow2", IOPS: 500, MBps: 100}, {Path: "/v/b.qcow2"}}}
	d, _ := parseBuilt(t, spec, DomainTypeQEMU)
	if d.CPUTune == nil || d.CPUTune.Period == nil || d.CPUTune.Period.Value != 100000 ||
		d.CPUTune.Quota == nil || d.CPUTune.Quota.Value != 50000 {
		t.Fatalf("cputune %+v, want period 100000, quota 50000", d.CPUTune)
	}
	if d.VCPU.CPUSet != "0,4-7" {
		t.Errorf("vcpu cpuset %q, want 0,4-7", d.VCPU.CPUSet)
	}
	if io := d.Devices.Disks[0].IOTune; io == nil || io.TotalIopsSec != 500 || io.TotalBytesSec != 100_000_000 {
		t.Errorf("iotune %+v, want 500 IOPS, 100 MB/s", io)
	}
	if d.Devices.Disks[1].IOTune != nil {
		t.Errorf("unlimited disk got iotune %+v", d.Devices.Disks[1].IOTune)
	}

	pinned := DomainSpec{VMID: 4, VCPUs: 2, MemoryMiB: 512, PinnedCPUs: []int{2, 3}, SharedCPUs: []int{0, 1}}
	d, _ = parseBuilt(t, pinned, DomainTypeQEMU)
	if d.VCPU.CPUSet != "" || d.CPUTune == nil || len(d.CPUTune.VCPUPin) != 2 || d.CPUTune.Quota != nil {
		t.Errorf("pinned domain: cpuset %q, cputune %+v", d.VCPU.CPUSet, d.CPUTune)
	}
	unlimited := DomainSpec{VMID: 5, VCPUs: 1, MemoryMiB: 512, CPUQuotaPercent: 100}
	if d, _ = parseBuilt(t, unlimited, DomainTypeQEMU); d.CPUTune != nil {
		t.Errorf("100%% CPU got cputune %+v", d.CPUTune)
	}
	for _, bad := range []DomainSpec{
		{VMID: 6, VCPUs: 1, MemoryMiB: 512, CPUQuotaPercent: 101},
		{VMID: 6, VCPUs: 1, MemoryMiB: 512, SharedCPUs: []int{-1}},
		{VMID: 6, VCPUs: 1, MemoryMiB: 512, Disks: []Disk{{Path: "/v/a.qcow2", IOPS: -1}}},
	} {
		if _, err := BuildDomainXML(bad, DomainTypeQEMU); !errors.Is(err, ErrInvalidSpec) {
			t.Errorf("%+v: err %v, want ErrInvalidSpec", bad, err)
		}
	}
}
