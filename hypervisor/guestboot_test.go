package hypervisor

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/digitalocean/go-libvirt"
	"github.com/digitalocean/go-libvirt/socket/dialers"
	"libvirt.org/go/libvirtxml"

	"github.com/virtflow/virtflow/configdrive"
	"github.com/virtflow/virtflow/internal/guestimage"
)

// guestBootTimeout bounds the whole boot under software emulation; the guest needs a few
// seconds on an idle machine, far more on a loaded one.
const guestBootTimeout = 120 * time.Second

// TestGuestBootsAndReadsConfigDrive boots a real Linux guest through libvirt's qemu:///system
// in a domain of type qemu (software emulation: no /dev/kvm needed): the host's Debian kernel
// started directly, an initramfs of busybox and the CD-ROM modules
// (internal/guestimage), and a cidata config drive built by package configdrive as an IDE
// CD-ROM. The guest mounts the CD-ROM and prints the meta-data's instance-id on its serial
// console, which libvirt writes to a file the test reads; then it powers off.
//
// It skips only when a part is missing (qemu-system-x86_64, /boot/vmlinuz-*, busybox,
// libvirtd or its qemu driver), naming it.
func TestGuestBootsAndReadsConfigDrive(t *testing.T) {
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		t.Skip("qemu-system-x86_64 is not installed (apt-get install qemu-system-x86; .ci/run does it)")
	}
	kernel, err := guestimage.FindKernel()
	if err != nil {
		t.Skipf("no guest kernel: %v", err)
	}
	const busybox = "/bin/busybox"
	if _, err := os.Stat(busybox); err != nil {
		t.Skip("no /bin/busybox (apt-get install busybox-static; .ci/run does it)")
	}
	socket := libvirtSocket(t)

	c := libvirt.NewWithDialer(dialers.NewLocal(dialers.WithSocket(socket), dialers.WithLocalTimeout(10*time.Second)))
	if err := c.ConnectToURI(libvirt.QEMUSystem); err != nil {
		t.Skipf("libvirtd at %s has no qemu driver (qemu:///system: %v; apt-get install libvirt-daemon-driver-qemu)", socket, err)
	}
	t.Cleanup(func() {
		if err := c.Disconnect(); err != nil {
			t.Errorf("disconnect: %v", err)
		}
	})
	caps, err := c.ConnectGetCapabilities()
	if err != nil {
		t.Fatalf("capabilities of qemu:///system: %v", err)
	}
	if !strings.Contains(caps, "<domain type='qemu'") {
		t.Skip("libvirtd's qemu driver offers no domain type qemu for this host (is qemu-system-x86_64 visible to libvirtd?)")
	}

	dir := t.TempDir()
	suffix := randomHex(t, 4)
	instanceID := "vm-" + suffix
	iso := filepath.Join(dir, "cidata.iso")
	writeFile(t, iso, func(f *os.File) error {
		return configdrive.Build(f, configdrive.Spec{InstanceID: instanceID, Hostname: "guestboot"})
	})
	initrd := filepath.Join(dir, "initrd.gz")
	writeFile(t, initrd, func(f *os.File) error { return guestimage.WriteInitramfs(f, kernel, busybox) })
	console := filepath.Join(dir, "console.log")
	t.Logf("guest: kernel %s, initramfs %d bytes, config drive %d bytes", kernel.Version, fileSize(t, initrd), fileSize(t, iso))

	// The name lacks DomainPrefix, so no node agent on this host mistakes it for a VM of its own.
	name := "virtflow-guestboot-" + suffix
	xml, err := guestDomainXML(name, kernel.Image, initrd, iso, console)
	if err != nil {
		t.Fatal(err)
	}
	dom, err := c.DomainDefineXMLFlags(xml, 0)
	if err != nil {
		t.Fatalf("define the guest domain: %v", err)
	}
	t.Cleanup(func() {
		if st, _, err := c.DomainGetState(dom, 0); err == nil && libvirt.DomainState(st) != libvirt.DomainShutoff {
			if err := c.DomainDestroy(dom); err != nil {
				t.Errorf("destroy %s: %v", name, err)
			}
		}
		if err := c.DomainUndefineFlags(dom, 0); err != nil {
			t.Errorf("undefine %s: %v", name, err)
		}
	})

	start := time.Now()
	if err := c.DomainCreate(dom); err != nil {
		t.Fatalf("start the guest: %v (QEMU must run as root to read the test's files: user = \"root\" in /etc/libvirt/qemu.conf, as .ci/run sets)", err)
	}
	want := "instance-id: " + instanceID
	deadline := start.Add(guestBootTimeout)
	var out []byte
	for {
		out, _ = os.ReadFile(console)
		if hasLine(out, want) {
			break
		}
		st, _, err := c.DomainGetState(dom, 0)
		if err != nil {
			t.Fatalf("state of %s: %v", name, err)
		}
		if libvirt.DomainState(st) == libvirt.DomainShutoff {
			out, _ = os.ReadFile(console)
			if hasLine(out, want) {
				break
			}
			t.Fatalf("the guest stopped without printing %q; console:\n%s", want, tail(out, 4000))
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q on the console after %s; console:\n%s", want, guestBootTimeout, tail(out, 4000))
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("guest printed %q %.1f s after start (domain type qemu, software emulation)", want, time.Since(start).Seconds())

	// /init powers off once it has printed: the domain ends shut off on its own.
	for {
		st, _, err := c.DomainGetState(dom, 0)
		if err != nil {
			t.Fatalf("state of %s: %v", name, err)
		}
		if libvirt.DomainState(st) == libvirt.DomainShutoff {
			break
		}
		if time.Now().After(deadline) {
			out, _ = os.ReadFile(console)
			t.Fatalf("the guest did not power off; console:\n%s", tail(out, 2000))
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("guest powered off %.1f s after start", time.Since(start).Seconds())
}

// guestDomainXML is a domain of type qemu booting kernel and initrd directly, with iso as
// an IDE CD-ROM and the first serial port written to console.
func guestDomainXML(name, kernel, initrd, iso, console string) (string, error) {
	d := libvirtxml.Domain{
		Type:   DomainTypeQEMU,
		Name:   name,
		Memory: &libvirtxml.DomainMemory{Value: 256, Unit: "MiB"},
		VCPU:   &libvirtxml.DomainVCPU{Value: 1},
		OS: &libvirtxml.DomainOS{
			Type:    &libvirtxml.DomainOSType{Arch: "x86_64", Machine: "pc", Type: "hvm"},
			Kernel:  kernel,
			Initrd:  initrd,
			Cmdline: "console=ttyS0 panic=-1",
		},
		Features:   &libvirtxml.DomainFeatureList{ACPI: &libvirtxml.DomainFeature{}},
		OnPoweroff: "destroy",
		OnReboot:   "destroy",
		OnCrash:    "destroy",
		Devices: &libvirtxml.DomainDeviceList{
			Disks: []libvirtxml.DomainDisk{{
				Device:   "cdrom",
				Driver:   &libvirtxml.DomainDiskDriver{Name: "qemu", Type: "raw"},
				Source:   &libvirtxml.DomainDiskSource{File: &libvirtxml.DomainDiskSourceFile{File: iso}},
				Target:   &libvirtxml.DomainDiskTarget{Dev: "hdc", Bus: "ide"},
				ReadOnly: &libvirtxml.DomainDiskReadOnly{},
			}},
			Serials: []libvirtxml.DomainSerial{{
				Source: &libvirtxml.DomainChardevSource{File: &libvirtxml.DomainChardevSourceFile{Path: console}},
				Target: &libvirtxml.DomainSerialTarget{Port: new(uint(0))},
			}},
			MemBalloon: &libvirtxml.DomainMemBalloon{Model: "none"},
		},
	}
	return d.Marshal()
}

// hasLine reports whether out has a line equal to want (ignoring the console's \r).
func hasLine(out []byte, want string) bool {
	for _, line := range bytes.Split(out, []byte("\n")) {
		if string(bytes.TrimRight(line, "\r")) == want {
			return true
		}
	}
	return false
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func writeFile(t *testing.T, path string, write func(*os.File) error) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := write(f); err != nil {
		f.Close()
		t.Fatalf("write %s: %v", path, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}
