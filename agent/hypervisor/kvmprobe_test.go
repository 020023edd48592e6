package hypervisor

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// fakeProbe is a KVMProber that answers err and counts its calls.
type fakeProbe struct {
	err   error
	calls int
}

func (f *fakeProbe) ProbeKVM(context.Context) error { f.calls++; return f.err }

// TestChooseDomainType is the decision of --domain-type: explicit modes are taken without a
// probe, auto probes on qemu:// only and falls back to qemu, with the reason, when the probe
// fails.
func TestChooseDomainType(t *testing.T) {
	hung := errors.New("the guest did not finish within 20s")
	for _, tc := range []struct {
		name, uri, mode string
		probeErr        error
		want            string
		wantCalls       int
		wantReason      string
		wantErr         bool
	}{
		{name: "auto, KVM runs", uri: "qemu:///system", mode: "auto", want: DomainTypeKVM, wantCalls: 1, wantReason: "booted"},
		{name: "empty is auto", uri: "qemu:///system", mode: "", want: DomainTypeKVM, wantCalls: 1},
		{name: "auto, KVM hangs", uri: "qemu:///system", mode: "auto", probeErr: hung, want: DomainTypeQEMU, wantCalls: 1, wantReason: "did not finish"},
		{name: "kvm forced, no probe", uri: "qemu:///system", mode: "kvm", probeErr: hung, want: DomainTypeKVM},
		{name: "qemu forced, no probe", uri: "qemu:///system", mode: "qemu", want: DomainTypeQEMU},
		{name: "test driver", uri: "test:///default", mode: "auto", probeErr: hung, want: DomainTypeTest},
		{name: "unknown mode", uri: "qemu:///system", mode: "lxc", wantErr: true},
		{name: "unsupported driver", uri: "xen:///system", mode: "auto", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &fakeProbe{err: tc.probeErr}
			got, reason, err := ChooseDomainType(context.Background(), tc.uri, tc.mode, p)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("ChooseDomainType(%q, %q) = %q, %v; want %q (error %v)", tc.uri, tc.mode, got, err, tc.want, tc.wantErr)
			}
			if p.calls != tc.wantCalls {
				t.Errorf("probe called %d times, want %d", p.calls, tc.wantCalls)
			}
			if !strings.Contains(reason, tc.wantReason) {
				t.Errorf("reason %q, want it to contain %q", reason, tc.wantReason)
			}
		})
	}
}

// TestQEMUProbeNoDevice fails fast, without QEMU, when the KVM device does not exist.
func TestQEMUProbeNoDevice(t *testing.T) {
	err := QEMUProbe{DevKVM: "/nonexistent/kvm", Binary: "/bin/false"}.ProbeKVM(context.Background())
	if !errors.Is(err, ErrKVMUnusable) {
		t.Fatalf("probe without a device = %v, want ErrKVMUnusable", err)
	}
}

// TestQEMUProbeOnThisHost runs the real probes on this machine: whatever they find, they
// finish within their timeout and answer nil or ErrKVMUnusable. The result and the time
// are logged (the figures of the README).
func TestQEMUProbeOnThisHost(t *testing.T) {
	if _, err := os.Stat("/dev/kvm"); err != nil {
		t.Skip("no /dev/kvm on this host")
	}
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		t.Skip("qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)")
	}
	for _, tc := range []struct {
		name  string
		probe QEMUProbe
	}{
		{name: "firmware", probe: QEMUProbe{FirmwareOnly: true, Timeout: 10 * time.Second}},
		{name: "kernel", probe: QEMUProbe{Timeout: 15 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "kernel" && newestKernel("/boot") == "" {
				t.Skip("no /boot/vmlinuz-* to boot (apt-get install linux-image-amd64)")
			}
			start := time.Now()
			err := tc.probe.ProbeKVM(context.Background())
			took := time.Since(start)
			t.Logf("%s probe: %v after %s", tc.name, err, took.Round(time.Millisecond))
			if err != nil && !errors.Is(err, ErrKVMUnusable) {
				t.Fatalf("probe error %v is not ErrKVMUnusable", err)
			}
			if took > tc.probe.Timeout+5*time.Second {
				t.Fatalf("probe took %s, past its timeout %s", took, tc.probe.Timeout)
			}
		})
	}
}

// TestLibvirtAutoFallsBackToQEMU: a Libvirt on qemu:///system in auto mode whose KVM probe
// fails defines qemu domains and says why; one whose probe passes defines kvm domains.
func TestLibvirtAutoFallsBackToQEMU(t *testing.T) {
	socket := libvirtSocket(t)
	for _, tc := range []struct {
		probe error
		want  string
	}{{probe: errors.New("hung"), want: DomainTypeQEMU}, {want: DomainTypeKVM}} {
		p := &fakeProbe{err: tc.probe}
		h, err := NewLibvirt(testCtx(t), LibvirtConfig{Socket: socket, URI: "qemu:///system", DomainType: DomainTypeAuto, KVMProbe: p})
		if err != nil {
			t.Fatalf("NewLibvirt(qemu:///system): %v", err)
		}
		_ = h.Close()
		if h.DomainType() != tc.want || p.calls != 1 || h.DomainTypeReason() == "" {
			t.Errorf("probe %v: domain type %q (reason %q) after %d probes; want %q after one", tc.probe, h.DomainType(), h.DomainTypeReason(), p.calls, tc.want)
		}
	}
}
