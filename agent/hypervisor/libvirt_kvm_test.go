package hypervisor

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestLibvirtQEMUBootsDisklessDomain boots a real KVM domain through qemu:///system and tears
// it down. It needs /dev/kvm, qemu-system-x86_64 and a libvirtd (skipped otherwise); the
// domain has no disk and no NIC, so it sits in the firmware looking for a boot device, which
// is all a running domain needs to be here.
func TestLibvirtQEMUBootsDisklessDomain(t *testing.T) {
	if _, err := os.Stat("/dev/kvm"); err != nil {
		t.Skip("no /dev/kvm: a real KVM domain cannot run here")
	}
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		t.Skip("qemu-system-x86_64 is not installed (apt-get install qemu-system-x86; .ci/run does it where /dev/kvm exists)")
	}
	socket := libvirtSocket(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h, err := NewLibvirt(ctx, LibvirtConfig{Socket: socket, URI: "qemu:///system", DomainType: DomainTypeKVM})
	if err != nil {
		t.Fatalf("NewLibvirt(qemu:///system): %v", err)
	}
	defer h.Close()
	if h.DomainType() != DomainTypeKVM {
		t.Fatalf("DomainType() = %q with --domain-type kvm, want kvm", h.DomainType())
	}

	spec := DomainSpec{VMID: newVMID(), Generation: 1, VCPUs: 1, MemoryMiB: 64}
	name := spec.Name()
	cleanupDomain(t, h, name)
	must(t, "Define", h.Define(ctx, spec))
	if err := h.Start(ctx, name); err != nil {
		t.Fatalf("Start a KVM domain: %v (QEMU must run as root: user = \"root\" in /etc/libvirt/qemu.conf, as .ci/run sets)", err)
	}
	mustState(t, h, name, StateRunning)
	must(t, "Start again", h.Start(ctx, name))
	d, ok := findDomain(t, h, spec.VMID)
	if !ok || d.State != StateRunning || d.Generation != 1 {
		t.Fatalf("List: %+v (found %v), want the running domain at generation 1", d, ok)
	}
	// No guest OS answers the ACPI power button: Shutdown gives up when its context ends and
	// says so, the domain still runs, and Stop pulls the plug.
	short, cancelShort := context.WithTimeout(ctx, time.Second)
	err = h.Shutdown(short, name)
	cancelShort()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown of a guest without an OS: err = %v, want context.DeadlineExceeded", err)
	}
	mustState(t, h, name, StateRunning)
	must(t, "Stop", h.Stop(ctx, name))
	mustState(t, h, name, StateShutOff)
	must(t, "Start after Stop", h.Start(ctx, name))
	must(t, "Undefine a running domain", h.Undefine(ctx, name))
	if _, err := h.State(ctx, name); !errors.Is(err, ErrNotFound) {
		t.Fatalf("State after Undefine: err = %v, want ErrNotFound", err)
	}
}
