package hypervisor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Domain type modes of the node agent's --domain-type.
const (
	// DomainTypeAuto probes whether KVM really runs a guest (see [QEMUProbe]) and chooses
	// kvm when it does, qemu (software emulation) when it does not.
	DomainTypeAuto = "auto"
)

// DefaultKVMProbeTimeout bounds the KVM probe. A kernel that works under KVM reaches its
// root mount in about a second; one that does not never gets there.
const DefaultKVMProbeTimeout = 20 * time.Second

// ErrKVMUnusable is the probe's error when KVM cannot run a guest here.
var ErrKVMUnusable = errors.New("KVM cannot run a guest on this host")

// KVMProber tells whether KVM really runs guests on this host: nil when it does.
type KVMProber interface {
	ProbeKVM(ctx context.Context) error
}

// ChooseDomainType decides the type of the domains an agent on uri defines, for mode auto,
// kvm or qemu (empty is auto). An explicit kvm or qemu is taken as it is (no probe). Auto is
// test for libvirt's test driver and, for qemu://, kvm when probe says KVM runs a guest, else
// qemu; reason says why, for the agent's log and the node's record.
func ChooseDomainType(ctx context.Context, uri, mode string, probe KVMProber) (domainType, reason string, err error) {
	switch mode {
	case DomainTypeKVM, DomainTypeQEMU:
		return mode, "set by --domain-type", nil
	case DomainTypeTest:
		return mode, "set by --domain-type", nil
	case "", DomainTypeAuto:
	default:
		return "", "", fmt.Errorf("domain type %q: want auto, kvm or qemu", mode)
	}
	u, err := url.Parse(uri)
	if err != nil {
		return "", "", fmt.Errorf("libvirt URI %q: %w", uri, err)
	}
	switch u.Scheme {
	case "test":
		return DomainTypeTest, "libvirt's test driver", nil
	case "qemu":
	default:
		return "", "", fmt.Errorf("libvirt URI %q: only test:// and qemu:// drivers are supported", uri)
	}
	if probe == nil {
		return DomainTypeQEMU, "no KVM probe: software emulation", nil
	}
	start := time.Now()
	if err := probe.ProbeKVM(ctx); err != nil {
		if ctx.Err() != nil {
			return "", "", ctx.Err()
		}
		return DomainTypeQEMU, fmt.Sprintf("KVM probe failed after %s, falling back to software emulation: %v",
			time.Since(start).Round(time.Millisecond), err), nil
	}
	return DomainTypeKVM, fmt.Sprintf("KVM probe booted a guest in %s", time.Since(start).Round(time.Millisecond)), nil
}

// QEMUProbe checks KVM the way a VM would use it: it starts the host's QEMU with -accel kvm
// and a guest, and waits for the guest to prove it ran, killing QEMU at Timeout.
//
// With a kernel (Kernel, or the newest /boot/vmlinuz-*), the guest is that kernel booted
// directly with no root file system: under a working KVM it starts, finds no root and panics
// ("VFS: Unable to mount root fs"), and with -no-reboot QEMU exits; the probe passes when the
// serial console shows the panic. This is what an opened /dev/kvm or a successful
// KVM_CREATE_VM cannot tell: on hosts where /dev/kvm exists and small guests run, a kernel
// may still hang at its start (it did on the project's machines: the probe then times out).
//
// Without a kernel, the guest is a 64 KiB firmware (kvmProbeFirmware) that programs the
// timer and the interrupt controller, waits for one timer interrupt and exits QEMU through
// isa-debug-exit: it proves KVM runs guest code and delivers interrupts, not that a kernel
// boots.
type QEMUProbe struct {
	// Binary is QEMU; qemu-system-x86_64 from PATH when empty.
	Binary string
	// Kernel is the kernel to boot; the newest /boot/vmlinuz-* when empty, the firmware
	// when there is none.
	Kernel string
	// FirmwareOnly runs the firmware guest even when a kernel is there (faster, weaker).
	FirmwareOnly bool
	// DevKVM is the KVM device; /dev/kvm when empty.
	DevKVM string
	// Timeout bounds the probe; DefaultKVMProbeTimeout when zero.
	Timeout time.Duration
}

var _ KVMProber = QEMUProbe{}

// ProbeKVM runs the probe; see [QEMUProbe].
func (p QEMUProbe) ProbeKVM(ctx context.Context) error {
	dev := p.DevKVM
	if dev == "" {
		dev = "/dev/kvm"
	}
	f, err := os.OpenFile(dev, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrKVMUnusable, err)
	}
	_ = f.Close()
	bin := p.Binary
	if bin == "" {
		bin = "qemu-system-x86_64"
	}
	if bin, err = exec.LookPath(bin); err != nil {
		return fmt.Errorf("%w: %v", ErrKVMUnusable, err)
	}
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = DefaultKVMProbeTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	dir, err := os.MkdirTemp("", "virtflow-kvm-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	args := []string{"-accel", "kvm", "-machine", "pc", "-nodefaults", "-no-user-config", "-display", "none",
		"-m", "128", "-no-reboot", "-serial", "file:" + filepath.Join(dir, "console")}
	kernel := p.Kernel
	if kernel == "" && !p.FirmwareOnly {
		kernel = newestKernel("/boot")
	}
	if p.FirmwareOnly {
		kernel = ""
	}
	if kernel != "" {
		args = append(args, "-kernel", kernel, "-append", "console=ttyS0 panic=-1 quiet")
	} else {
		fw := filepath.Join(dir, "firmware.bin")
		if err := os.WriteFile(fw, kvmProbeFirmware(), 0o600); err != nil {
			return err
		}
		args = append(args, "-bios", fw, "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04")
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = time.Second
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return fmt.Errorf("%w: the guest did not finish within %s (hung under KVM)", ErrKVMUnusable, timeout)
	}
	if kernel == "" {
		// isa-debug-exit exits with (value<<1)|1: 0x31 makes 99.
		var exit *exec.ExitError
		if errors.As(runErr, &exit) && exit.ExitCode() == 99 {
			return nil
		}
		return fmt.Errorf("%w: the probe firmware did not exit as expected: %v: %s", ErrKVMUnusable, runErr, lastLine(stderr.String()))
	}
	console, _ := os.ReadFile(filepath.Join(dir, "console"))
	if bytes.Contains(console, []byte("Kernel panic")) || bytes.Contains(console, []byte("VFS:")) {
		return nil
	}
	return fmt.Errorf("%w: the kernel %s did not reach its root mount (%v): %s", ErrKVMUnusable, kernel, runErr,
		lastLine(stderr.String()+string(console)))
}

// newestKernel returns the last /boot/vmlinuz-* in name order, or "".
func newestKernel(dir string) string {
	m, _ := filepath.Glob(filepath.Join(dir, "vmlinuz-*"))
	slices.Sort(m)
	for i := len(m) - 1; i >= 0; i-- {
		if f, err := os.Open(m[i]); err == nil { // readable: the agent may not run as root
			_ = f.Close()
			return m[i]
		}
	}
	return ""
}

// lastLine returns the last non-empty line of s, for an error message.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// kvmProbeCode is the probe firmware's program, 16-bit real mode, loaded at F000:0000
// (assembled with GNU as from this source):
//
//	cli
//	mov $0x1b,%ecx; rdmsr; and $0xfffff7ff,%eax; wrmsr   # disable the local APIC: the PIC's INTR reaches the CPU
//	xor %ax,%ax; mov %ax,%ds; mov %ax,%ss; mov $0x7000,%sp
//	movw $handler,0x20; movw $0xF000,0x22                  # IVT vector 8 (IRQ 0) -> handler
//	ICW1..4 to the master PIC (0x11, 0x08, 0x04, 0x01), mask all but IRQ 0, mask the slave
//	PIT channel 0, mode 2, divisor 0x04A9 (1 ms)
//	sti; 1: hlt; jmp 1b
//	handler: mov $0x31,%al; out %al,$0xf4                  # isa-debug-exit: QEMU exits 99
//	2: cli; hlt; jmp 2b
var kvmProbeCode = []byte{
	0xfa, 0x66, 0xb9, 0x1b, 0x00, 0x00, 0x00, 0x0f, 0x32, 0x66, 0x25, 0xff, 0xf7, 0xff, 0xff, 0x0f,
	0x30, 0x31, 0xc0, 0x8e, 0xd8, 0x8e, 0xd0, 0xbc, 0x00, 0x70, 0xc7, 0x06, 0x20, 0x00, 0x4e, 0x00,
	0xc7, 0x06, 0x22, 0x00, 0x00, 0xf0, 0xb0, 0x11, 0xe6, 0x20, 0xb0, 0x08, 0xe6, 0x21, 0xb0, 0x04,
	0xe6, 0x21, 0xb0, 0x01, 0xe6, 0x21, 0xb0, 0xfe, 0xe6, 0x21, 0xb0, 0xff, 0xe6, 0xa1, 0xb0, 0x34,
	0xe6, 0x43, 0xb0, 0xa9, 0xe6, 0x40, 0xb0, 0x04, 0xe6, 0x40, 0xfb, 0xf4, 0xeb, 0xfd, 0xb0, 0x31,
	0xe6, 0xf4, 0xfa, 0xf4, 0xeb, 0xfc,
}

// kvmProbeFirmware returns the 64 KiB firmware image: kvmProbeCode at its start and, at the
// reset vector (the last 16 bytes, F000:FFF0), a far jump to it.
func kvmProbeFirmware() []byte {
	fw := make([]byte, 64<<10)
	copy(fw, kvmProbeCode)
	copy(fw[0xfff0:], []byte{0xea, 0x00, 0x00, 0x00, 0xf0}) // ljmp $0xF000,$0
	return fw
}
