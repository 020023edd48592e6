package nodeagent

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/virtflow/virtflow/hypervisor"
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
	pins, errs := pinCPUs(as, 10, 2)
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
	ag := &Agent{cfg: Config{DefaultNetwork: "default", BridgeFormat: "br-vlan%d", DiskDir: "/var/lib/virtflow/disks"}}
	a := vmAssignment("a1", "42", 2, "DEDICATED", "RUNNING")
	mac, vlan, driver := "52:54:00:AA:BB:01", 100, "e1000"
	mac2 := "52:54:00:aa:bb:02"
	a.VirtualMachine.Ports.Edges = append(a.VirtualMachine.Ports.Edges,
		&VMPortEdge{Node: &VMPort{Mac: &mac, Vlan: &vlan, Driver: &driver}},
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
		NICs:  []hypervisor.NIC{{MAC: mac, Model: "e1000", Bridge: "br-vlan100"}, {MAC: mac2, Network: "default"}}}
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
	pins, _ := pinCPUs(as, 8, 2)
	shared := sharedCPUs(pins, 8)
	if !slices.Equal(shared, []int{0, 1, 4, 5, 6, 7}) {
		t.Fatalf("shared CPUs %v, want all but the pinned 2-3", shared)
	}
	if sharedCPUs(nil, 8) != nil {
		t.Error("nothing pinned: shared VMs should float over every CPU")
	}
	ag := &Agent{cfg: Config{DiskDir: "/var/lib/virtflow/disks"}}
	a := as[1]
	iops, mbps := 300, 50
	a.VirtualMachine.Flavor.DiskGB = 10
	a.VirtualMachine.Flavor.CpuLimitPercent = 40
	a.VirtualMachine.Flavor.DiskIopsLimit, a.VirtualMachine.Flavor.DiskMbpsLimit = &iops, &mbps
	spec, err := ag.specFor(context.Background(), a, shared)
	if err != nil {
		t.Fatal(err)
	}
	if spec.PinnedCPUs != nil || !slices.Equal(spec.SharedCPUs, shared) || spec.CPUQuotaPercent != 40 ||
		len(spec.Disks) != 1 || spec.Disks[0].IOPS != 300 || spec.Disks[0].MBps != 50 {
		t.Fatalf("spec %+v", spec)
	}
}
