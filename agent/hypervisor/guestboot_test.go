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

	"github.com/virtflow/virtflow/agent/configdrive"
	"github.com/virtflow/virtflow/internal/testkit/guestimage"
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
	env := newGuestBootEnv(t)
	printed, off := env.boot(t)
	t.Logf("guest printed its instance-id %.1f s after start and powered off after %.1f s (domain type qemu, software emulation)",
		printed.Seconds(), off.Seconds())
}

// BenchmarkGuestBoot measures the time from starting the guest of
// TestGuestBootsAndReadsConfigDrive to its instance-id on the console (s/instance-id) and to
// its power-off (s/poweroff). Run it with -benchtime 3x: one boot takes seconds.
func BenchmarkGuestBoot(b *testing.B) {
	env := newGuestBootEnv(b)
	var printed, off time.Duration
	for b.Loop() {
		p, o := env.boot(b)
		printed += p
		off += o
	}
	b.ReportMetric(printed.Seconds()/float64(b.N), "s/instance-id")
	b.ReportMetric(off.Seconds()/float64(b.N), "s/poweroff")
}

// guestBootEnv is what booting the test guest needs: a connection to qemu:///system, the
// host's kernel and busybox.
type guestBootEnv struct {
	conn    *libvirt.Libvirt
	kernel  guestimage.Kernel
	busybox string
}

// newGuestBootEnv finds the guest's parts and connects to qemu:///system; it skips naming
// the part that is missing.
func newGuestBootEnv(tb testing.TB) *guestBootEnv {
	tb.Helper()
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		tb.Skip("qemu-system-x86_64 is not installed (apt-get install qemu-system-x86; .ci/run does it)")
	}
	kernel, err := guestimage.FindKernel()
	if err != nil {
		tb.Skipf("no guest kernel: %v", err)
	}
	const busybox = "/bin/busybox"
	if _, err := os.Stat(busybox); err != nil {
		tb.Skip("no /bin/busybox (apt-get install busybox-static; .ci/run does it)")
	}
	socket := libvirtSocketTB(tb)

	c := libvirt.NewWithDialer(dialers.NewLocal(dialers.WithSocket(socket), dialers.WithLocalTimeout(10*time.Second)))
	if err := c.ConnectToURI(libvirt.QEMUSystem); err != nil {
		tb.Skipf("libvirtd at %s has no qemu driver (qemu:///system: %v; apt-get install libvirt-daemon-driver-qemu)", socket, err)
	}
	tb.Cleanup(func() {
		if err := c.Disconnect(); err != nil {
			tb.Errorf("disconnect: %v", err)
		}
	})
	caps, err := c.ConnectGetCapabilities()
	if err != nil {
		tb.Fatalf("capabilities of qemu:///system: %v", err)
	}
	if !strings.Contains(caps, "<domain type='qemu'") {
		tb.Skip("libvirtd's qemu driver offers no domain type qemu for this host (is qemu-system-x86_64 visible to libvirtd?)")
	}
	return &guestBootEnv{conn: c, kernel: kernel, busybox: busybox}
}

// boot builds a config drive with a fresh instance-id and the initramfs, defines and starts
// the guest, waits for "instance-id: <id>" on its console and for its power-off, and
// undefines it. It returns both times, counted from the start.
func (e *guestBootEnv) boot(tb testing.TB) (printed, off time.Duration) {
	tb.Helper()
	c := e.conn
	dir := tb.TempDir()
	suffix := randomHex(tb, 4)
	instanceID := "vm-" + suffix
	iso := filepath.Join(dir, "cidata.iso")
	writeFile(tb, iso, func(f *os.File) error {
		return configdrive.Build(f, configdrive.Spec{InstanceID: instanceID, Hostname: "guestboot"})
	})
	initrd := filepath.Join(dir, "initrd.gz")
	writeFile(tb, initrd, func(f *os.File) error { return guestimage.WriteInitramfs(f, e.kernel, e.busybox) })
	console := filepath.Join(dir, "console.log")
	tb.Logf("guest: kernel %s, initramfs %d bytes, config drive %d bytes", e.kernel.Version, fileSize(tb, initrd), fileSize(tb, iso))

	// The name lacks DomainPrefix, so no node agent on this host mistakes it for a VM of its own.
	name := "virtflow-guestboot-" + suffix
	xml, err := guestDomainXML(name, e.kernel.Image, initrd, iso, console)
	if err != nil {
		tb.Fatal(err)
	}
	dom, err := c.DomainDefineXMLFlags(xml, 0)
	if err != nil {
		tb.Fatalf("define the guest domain: %v", err)
	}
	defer func() {
		if st, _, err := c.DomainGetState(dom, 0); err == nil && libvirt.DomainState(st) != libvirt.DomainShutoff {
			if err := c.DomainDestroy(dom); err != nil {
				tb.Errorf("destroy %s: %v", name, err)
			}
		}
		if err := c.DomainUndefineFlags(dom, 0); err != nil {
			tb.Errorf("undefine %s: %v", name, err)
		}
	}()

	start := time.Now()
	if err := c.DomainCreate(dom); err != nil {
		tb.Fatalf("start the guest: %v (QEMU must run as root to read the test's files: user = \"root\" in /etc/libvirt/qemu.conf, as .ci/run sets)", err)
	}
	want := "instance-id: " + instanceID
	deadline := start.Add(guestBootTimeout)
	shutOff := func() bool {
		st, _, err := c.DomainGetState(dom, 0)
		if err != nil {
			tb.Fatalf("state of %s: %v", name, err)
		}
		return libvirt.DomainState(st) == libvirt.DomainShutoff
	}
	for {
		stopped := shutOff()
		out, _ := os.ReadFile(console)
		if hasLine(out, want) {
			printed = time.Since(start)
			break
		}
		if stopped {
			tb.Fatalf("the guest stopped without printing %q; console:\n%s", want, tail(out, 4000))
		}
		if time.Now().After(deadline) {
			tb.Fatalf("no %q on the console after %s; console:\n%s", want, guestBootTimeout, tail(out, 4000))
		}
		time.Sleep(100 * time.Millisecond)
	}
	// /init powers off once it has printed: the domain ends shut off on its own.
	for !shutOff() {
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(console)
			tb.Fatalf("the guest did not power off; console:\n%s", tail(out, 2000))
		}
		time.Sleep(100 * time.Millisecond)
	}
	return printed, time.Since(start)
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
			Cmdline: "console=ttyS0 panic=-1 loglevel=4", // warnings and errors only: less to interleave with /init's lines
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

func randomHex(tb testing.TB, n int) string {
	tb.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		tb.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func writeFile(tb testing.TB, path string, write func(*os.File) error) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := write(f); err != nil {
		f.Close()
		tb.Fatalf("write %s: %v", path, err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

func fileSize(tb testing.TB, path string) int64 {
	tb.Helper()
	st, err := os.Stat(path)
	if err != nil {
		tb.Fatal(err)
	}
	return st.Size()
}

// libvirtSocketTB is libvirtSocket for benchmarks as well as tests: $VIRTFLOW_TEST_LIBVIRT_SOCKET,
// or the default socket when it exists, else a skip.
func libvirtSocketTB(tb testing.TB) string {
	tb.Helper()
	if t, ok := tb.(*testing.T); ok {
		return libvirtSocket(t)
	}
	if s := os.Getenv("VIRTFLOW_TEST_LIBVIRT_SOCKET"); s != "" {
		return s
	}
	if _, err := os.Stat(DefaultSocket); err == nil {
		return DefaultSocket
	}
	tb.Skipf("no libvirtd: VIRTFLOW_TEST_LIBVIRT_SOCKET is unset and %s does not exist", DefaultSocket)
	return ""
}
