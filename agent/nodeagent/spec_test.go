package nodeagent

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/virtflow/virtflow/agent/hostnet"
	"github.com/virtflow/virtflow/agent/hypervisor"
)

func vmAssignment(id, vmID string, vcpus int, policy, desired string) Assignment {
	a := Assignment{Id: id, DesiredState: AssignmentDesiredState(desired), Generation: 3, VirtualMachine: &VirtualMachine{Id: vmID}}
	a.VirtualMachine.Flavor.Vcpus = vcpus
	a.VirtualMachine.Flavor.MemoryMB = 2048
	a.VirtualMachine.Flavor.CpuPolicy = FlavorCPUPolicy(policy)
	return a
}

func TestPinCPUs(t *testing.T) {
	as := []Assignment{
		vmAssignment("a3", "30", 4, "DEDICATED", "RUNNING"),
		vmAssignment("a1", "10", 2, "DEDICATED", "STOPPED"),
		vmAssignment("a2", "20", 8, "SHARED", "RUNNING"),
		vmAssignment("a4", "40", 2, "DEDICATED", "ABSENT"),
		vmAssignment("a5", "50", 4, "DEDICATED", "RUNNING"),
	}
	pins, errs := pinCPUs(as, 10, 2, nil)
	// VM 10 gets CPUs 2-3 (0 and 1 are reserved), VM 30 gets 4-7; VM 50 does not fit; the
	// shared and the absent VMs are not pinned.
	if !slices.Equal(pins["a1"], []int{2, 3}) || !slices.Equal(pins["a3"], []int{4, 5, 6, 7}) {
		t.Fatalf("pins = %v", pins)
	}
	if _, ok := pins["a2"]; ok {
		t.Error("a shared VM was pinned")
	}
	if _, ok := pins["a4"]; ok {
		t.Error("an absent VM was pinned")
	}
	if errs["a5"] == nil || len(errs) != 1 {
		t.Fatalf("errs = %v", errs)
	}
}

func TestSpecFor(t *testing.T) {
	ag := &Agent{cfg: Config{DefaultNetwork: "default", DiskDir: "/var/lib/virtflow/disks"}}
	a := vmAssignment("a1", "42", 2, "DEDICATED", "RUNNING")
	mac, vlan, driver, net := "52:54:00:AA:BB:01", 100, "e1000", "77"
	mac2 := "52:54:00:aa:bb:02"
	a.VirtualMachine.Ports.Edges = append(a.VirtualMachine.Ports.Edges,
		&VMPortEdge{Node: &VMPort{Mac: &mac, Vlan: &vlan, Driver: &driver, NetworkID: &net}},
		&VMPortEdge{Node: &VMPort{Mac: &mac2}},
		&VMPortEdge{Node: &VMPort{}}, // no MAC yet: left out
		nil,
	)
	a.VirtualMachine.Flavor.DiskGB = 20
	spec, err := ag.specFor(context.Background(), a, []int{4, 5})
	if err != nil {
		t.Fatal(err)
	}
	want := hypervisor.DomainSpec{VMID: 42, Generation: 3, VCPUs: 2, MemoryMiB: 2048, PinnedCPUs: []int{4, 5},
		Disks: []hypervisor.Disk{{Path: "/var/lib/virtflow/disks/vf-42.qcow2"}},
		NICs:  []hypervisor.NIC{{MAC: mac, Model: "e1000", Bridge: hostnet.BridgeName(77)}, {MAC: mac2, Network: "default"}}}
	if spec.VMID != want.VMID || spec.Generation != want.Generation || spec.VCPUs != want.VCPUs || spec.MemoryMiB != want.MemoryMiB ||
		!slices.Equal(spec.PinnedCPUs, want.PinnedCPUs) || !slices.Equal(spec.Disks, want.Disks) || !slices.Equal(spec.NICs, want.NICs) {
		t.Fatalf("spec = %+v\nwant  %+v", spec, want)
	}

	bad := vmAssignment("a2", "43", 0, "SHARED", "RUNNING")
	if _, err := ag.specFor(context.Background(), bad, nil); !errors.Is(err, hypervisor.ErrInvalidSpec) {
		t.Fatalf("a flavor without vCPUs: err = %v", err)
	}
}

func TestSettled(t *testing.T) {
	run := &hypervisor.Domain{Generation: 3, State: hypervisor.StateRunning}
	off := &hypervisor.Domain{Generation: 3, State: hypervisor.StateShutOff}
	old := &hypervisor.Domain{Generation: 2, State: hypervisor.StateRunning}
	for _, c := range []struct {
		desired string
		dom     *hypervisor.Domain
		want    bool
	}{
		{"RUNNING", run, true}, {"RUNNING", off, false}, {"RUNNING", old, false}, {"RUNNING", nil, false},
		{"STOPPED", off, true}, {"STOPPED", run, false},
		{"ABSENT", nil, true}, {"ABSENT", off, false},
	} {
		a := Assignment{DesiredState: AssignmentDesiredState(c.desired), Generation: 3}
		if got := settled(a, c.dom); got != c.want {
			t.Errorf("settled(%s, %+v) = %v, want %v", c.desired, c.dom, got, c.want)
		}
	}
}

// TestSharedFlavorLimits: a shared VM floats over the CPUs no dedicated VM is pinned to,
// with its flavor's CPU-time limit as a quota and its IO limits on the root disk.
func TestSharedFlavorLimits(t *testing.T) {
	as := []Assignment{
		vmAssignment("a1", "10", 2, "DEDICATED", "RUNNING"),
		vmAssignment("a2", "20", 2, "SHARED", "RUNNING"),
	}
	pins, _ := pinCPUs(as, 8, 2, nil)
	shared := sharedCPUs(pins, 8, 2)
	if !slices.Equal(shared, []int{4, 5, 6, 7}) {
		t.Fatalf("shared CPUs %v, want all but the reserved 0-1 and the pinned 2-3", shared)
	}
	if sharedCPUs(nil, 8, 0) != nil {
		t.Error("nothing pinned or reserved: shared VMs should float over every CPU")
	}
	if got := sharedCPUs(nil, 8, 3); !slices.Equal(got, []int{3, 4, 5, 6, 7}) {
		t.Errorf("nothing pinned, 3 reserved: shared CPUs %v, want 3-7", got)
	}
	ag := &Agent{cfg: Config{DiskDir: "/var/lib/virtflow/disks"}}
	a := as[1]
	iops, mbps, netMbps := 300, 50, 200
	a.VirtualMachine.Flavor.NetworkMbpsLimit = &netMbps
	mac, netID := "52:54:00:aa:bb:03", "5"
	a.VirtualMachine.Ports.Edges = append(a.VirtualMachine.Ports.Edges, &VMPortEdge{Node: &VMPort{Mac: &mac, NetworkID: &netID}})
	a.VirtualMachine.Flavor.DiskGB = 10
	a.VirtualMachine.Flavor.CpuLimitPercent = 40
	a.VirtualMachine.Flavor.DiskIopsLimit, a.VirtualMachine.Flavor.DiskMbpsLimit = &iops, &mbps
	spec, err := ag.specFor(context.Background(), a, shared)
	if err != nil {
		t.Fatal(err)
	}
	if spec.PinnedCPUs != nil || !slices.Equal(spec.SharedCPUs, shared) || spec.CPUQuotaPercent != 40 ||
		len(spec.Disks) != 1 || spec.Disks[0].IOPS != 300 || spec.Disks[0].MBps != 50 ||
		len(spec.NICs) != 1 || spec.NICs[0].BandwidthMbps != 200 || spec.NICs[0].Bridge != hostnet.BridgeName(5) {
		t.Fatalf("spec %+v", spec)
	}
}

// TestExclusiveFlavorSpec: a NUMA_NODE VM is pinned to its NUMA node's CPUs (less the
// reserved ones) with its memory bound there, and without any CPU, IO or network limit.
func TestExclusiveFlavorSpec(t *testing.T) {
	numa := []hypervisor.NUMANode{{ID: 0, CPUs: []int{0, 1, 2, 3}}, {ID: 1, CPUs: []int{4, 5, 6, 7}}}
	a := vmAssignment("a1", "10", 4, "SHARED", "RUNNING")
	a.VirtualMachine.Flavor.Exclusive = FlavorExclusiveNumaNode
	one := 1
	a.VirtualMachine.NumaNode = &one
	limit := 100
	a.VirtualMachine.Flavor.CpuLimitPercent = 50
	a.VirtualMachine.Flavor.NetworkMbpsLimit, a.VirtualMachine.Flavor.DiskIopsLimit = &limit, &limit
	mac, netID := "52:54:00:aa:bb:04", "6"
	a.VirtualMachine.Ports.Edges = append(a.VirtualMachine.Ports.Edges, &VMPortEdge{Node: &VMPort{Mac: &mac, NetworkID: &netID}})
	pins, errs := pinCPUs([]Assignment{a}, 8, 1, numa)
	if len(errs) != 0 || !slices.Equal(pins["a1"], []int{4, 5, 6, 7}) {
		t.Fatalf("pins %v errs %v, want NUMA node 1's CPUs 4-7", pins, errs)
	}
	ag := &Agent{cfg: Config{DefaultNetwork: "default"}}
	spec, err := ag.specFor(context.Background(), a, pins["a1"])
	if err != nil {
		t.Fatal(err)
	}
	if spec.NUMANode == nil || *spec.NUMANode != 1 || !slices.Equal(spec.PinnedCPUs, []int{4, 5, 6, 7}) ||
		spec.CPUQuotaPercent != 0 || spec.NICs[0].BandwidthMbps != 0 {
		t.Fatalf("spec %+v: want NUMA node 1, pinned 4-7, no limits", spec)
	}
	// On NUMA node 0, CPU 0 is reserved: the VM floats over the other three.
	zero := 0
	a.VirtualMachine.NumaNode = &zero
	pins, _ = pinCPUs([]Assignment{a}, 8, 1, numa)
	if spec, err = ag.specFor(context.Background(), a, pins["a1"]); err != nil || spec.PinnedCPUs != nil || !slices.Equal(spec.SharedCPUs, []int{1, 2, 3}) {
		t.Fatalf("spec %+v (%v): want floating over 1-3", spec, err)
	}
	// A HOST VM is not pinned but has no limits either.
	a.VirtualMachine.Flavor.Exclusive, a.VirtualMachine.NumaNode = FlavorExclusiveHost, nil
	if spec, err = ag.specFor(context.Background(), a, []int{1, 2, 3, 4, 5, 6, 7}); err != nil || spec.CPUQuotaPercent != 0 || spec.NUMANode != nil {
		t.Fatalf("HOST spec %+v (%v)", spec, err)
	}
}
