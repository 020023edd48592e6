package hypervisor

import (
	"context"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// TestEmulatorPinNUMAAndBandwidth: the emulator threads follow the vCPUs (a shared domain's
// shared set, a pinned domain's own CPUs), a NUMA node binds the memory strictly, and a NIC's
// bandwidth limit becomes <bandwidth> both ways in KiB/s.
func TestEmulatorPinNUMAAndBandwidth(t *testing.T) {
	shared := DomainSpec{VMID: 11, VCPUs: 2, MemoryMiB: 512, SharedCPUs: []int{2, 3, 6, 7},
		NICs: []NIC{{MAC: "52:54:00:00:00:11", Bridge: "vfbr-1", BandwidthMbps: 100}, {MAC: "52:54:00:00:00:12", Bridge: "vfbr-2"}}}
	d, _ := parseBuilt(t, shared, DomainTypeQEMU)
	if d.CPUTune == nil || d.CPUTune.EmulatorPin == nil || d.CPUTune.EmulatorPin.CPUSet != "2-3,6-7" {
		t.Fatalf("shared domain cputune %+v: want emulatorpin 2-3,6-7", d.CPUTune)
	}
	bw := d.Devices.Interfaces[0].Bandwidth
	if bw == nil || bw.Inbound == nil || bw.Outbound == nil || *bw.Inbound.Average != 12207 || *bw.Outbound.Average != 12207 {
		t.Fatalf("bandwidth %+v: want 12207 KiB/s (100 Mbit/s) in and out", bw)
	}
	if d.Devices.Interfaces[1].Bandwidth != nil {
		t.Error("an unlimited NIC got <bandwidth>")
	}
	if d.NUMATune != nil {
		t.Error("a domain without NUMA node got <numatune>")
	}

	node := 1
	numa := DomainSpec{VMID: 12, VCPUs: 2, MemoryMiB: 512, PinnedCPUs: []int{8, 9}, NUMANode: &node}
	d, _ = parseBuilt(t, numa, DomainTypeQEMU)
	if d.NUMATune == nil || d.NUMATune.Memory == nil || d.NUMATune.Memory.Mode != "strict" || d.NUMATune.Memory.Nodeset != "1" {
		t.Fatalf("numatune %+v: want memory strict nodeset 1", d.NUMATune)
	}
	if d.CPUTune.EmulatorPin == nil || d.CPUTune.EmulatorPin.CPUSet != "8-9" || len(d.CPUTune.VCPUPin) != 2 ||
		d.CPUTune.VCPUPin[1].CPUSet != "9" || d.CPUTune.Quota != nil {
		t.Fatalf("NUMA domain cputune %+v: want vcpupin 8, 9, emulatorpin 8-9, no quota", d.CPUTune)
	}
	if d.VCPU.CPUSet != "" {
		t.Errorf("pinned domain cpuset %q", d.VCPU.CPUSet)
	}

	neg := -1
	for _, bad := range []DomainSpec{
		{VMID: 13, VCPUs: 1, MemoryMiB: 512, NUMANode: &neg},
		{VMID: 13, VCPUs: 1, MemoryMiB: 512, NICs: []NIC{{MAC: "52:54:00:00:00:13", Bridge: "b", BandwidthMbps: -1}}},
	} {
		if _, err := BuildDomainXML(bad, DomainTypeQEMU); err == nil {
			t.Errorf("%+v: accepted", bad)
		}
	}
}

// TestLibvirtSetCPUAffinity: on libvirt's test driver, a running shared domain re-pinned
// with SetCPUAffinity reports the new affinity for every vCPU, and the test host's NUMA
// nodes are read from its capabilities.
func TestLibvirtSetCPUAffinity(t *testing.T) {
	h := openTestDriver(t, libvirtSocket(t))
	ctx := testCtx(t)
	c, err := h.Capacity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.NUMANodes) == 0 || len(c.NUMANodes[0].CPUs) == 0 || c.NUMANodes[0].MemoryMiB <= 0 {
		t.Fatalf("NUMA nodes %+v: the test driver's host has NUMA cells", c.NUMANodes)
	}
	spec := DomainSpec{VMID: newVMID(), Generation: 1, VCPUs: 2, MemoryMiB: 64}
	name := spec.Name()
	cleanupDomain(t, h, name)
	must(t, "Define", h.Define(ctx, spec))
	must(t, "Start", h.Start(ctx, name))
	shared := []int{2, 3}
	must(t, "SetCPUAffinity", h.SetCPUAffinity(ctx, name, shared))
	aff, err := h.CPUAffinity(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if len(aff) != 2 || !slices.Equal(aff[0], shared) || !slices.Equal(aff[1], shared) {
		t.Fatalf("affinity %v, want %v for both vCPUs", aff, shared)
	}
}

// TestQEMUSharedLeavesDedicatedCPUs runs two real domains under qemu:///system (software
// emulation): a dedicated one pinned to the host's last CPU and a shared one, which
// SetCPUAffinity confines, while it runs, to the other CPUs; the live affinity of the shared
// domain's vCPUs then excludes the dedicated domain's CPU.
func TestQEMUSharedLeavesDedicatedCPUs(t *testing.T) {
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		t.Skip("qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)")
	}
	socket := libvirtSocket(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	h, err := NewLibvirt(ctx, LibvirtConfig{Socket: socket, URI: "qemu:///system", DomainType: DomainTypeQEMU})
	if err != nil {
		t.Fatalf("NewLibvirt(qemu:///system): %v", err)
	}
	defer h.Close()
	c, err := h.Capacity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.VCPUs < 2 {
		t.Skipf("the host has %d CPU: a dedicated and a shared CPU need two", c.VCPUs)
	}
	last := c.VCPUs - 1
	var rest []int
	for i := range last {
		rest = append(rest, i)
	}
	shared := DomainSpec{VMID: newVMID(), Generation: 1, VCPUs: 1, MemoryMiB: 64}
	dedicated := DomainSpec{VMID: newVMID(), Generation: 1, VCPUs: 1, MemoryMiB: 64, PinnedCPUs: []int{last}}
	for _, s := range []DomainSpec{shared, dedicated} {
		cleanupDomain(t, h, s.Name())
		must(t, "Define", h.Define(ctx, s))
	}
	must(t, "Start shared", h.Start(ctx, shared.Name()))
	before, err := h.CPUAffinity(ctx, shared.Name())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(before[0], last) {
		t.Fatalf("shared domain affinity %v before: expected every CPU", before)
	}
	must(t, "SetCPUAffinity", h.SetCPUAffinity(ctx, shared.Name(), rest))
	must(t, "Start dedicated", h.Start(ctx, dedicated.Name()))
	after, err := h.CPUAffinity(ctx, shared.Name())
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(after[0], last) || !slices.Equal(after[0], rest) {
		t.Fatalf("shared domain affinity %v, want %v (not the dedicated CPU %d)", after, rest, last)
	}
	ded, err := h.CPUAffinity(ctx, dedicated.Name())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ded[0], []int{last}) {
		t.Fatalf("dedicated domain affinity %v, want [%d]", ded, last)
	}
}
