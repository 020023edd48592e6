package hypervisor

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/virtflow/virtflow/internal/testkit/poll"
)

// libvirtSocket returns the libvirtd socket to test against: $VIRTFLOW_TEST_LIBVIRT_SOCKET, or
// the default socket when it exists. Without either the test is skipped.
func libvirtSocket(t *testing.T) string {
	t.Helper()
	if s := os.Getenv("VIRTFLOW_TEST_LIBVIRT_SOCKET"); s != "" {
		return s // a configured socket that does not answer fails the test
	}
	if _, err := os.Stat(DefaultSocket); err == nil {
		return DefaultSocket
	}
	t.Skipf("no libvirtd: VIRTFLOW_TEST_LIBVIRT_SOCKET is unset and %s does not exist "+
		"(install and start libvirtd as ../shared/STACK.md says; .ci/run does it)", DefaultSocket)
	return ""
}

// openTestDriver connects to libvirt's test driver (test:///default) through the real daemon.
// The test driver keeps its domains while at least one connection to it is open.
func openTestDriver(t *testing.T, socket string) *Libvirt {
	t.Helper()
	h, err := NewLibvirt(testCtx(t), LibvirtConfig{Socket: socket, URI: "test:///default", PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatalf("NewLibvirt(%s, test:///default): %v", socket, err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return h
}

func TestLibvirtContract(t *testing.T) {
	socket := libvirtSocket(t)
	keep := openTestDriver(t, socket) // keeps the test driver's state across subtests' connections
	_ = keep
	runContract(t, func(t *testing.T) Hypervisor { return openTestDriver(t, socket) })
}

func TestLibvirtDomainType(t *testing.T) {
	h := openTestDriver(t, libvirtSocket(t))
	if got := h.DomainType(); got != DomainTypeTest {
		t.Fatalf("DomainType() = %q for test:///default, want %q", got, DomainTypeTest)
	}
}

// TestLibvirtListAfterRestart: an agent that restarts opens a new connection and rebuilds its
// view of VMs, generations and states from libvirt alone.
func TestLibvirtListAfterRestart(t *testing.T) {
	socket := libvirtSocket(t)
	ctx := testCtx(t)
	before := openTestDriver(t, socket)
	specs := []DomainSpec{smallSpec(), smallSpec(), smallSpec()}
	for i := range specs {
		specs[i].Generation = int64(7 + i)
		cleanupDomain(t, before, specs[i].Name())
		must(t, "Define", before.Define(ctx, specs[i]))
	}
	must(t, "Start", before.Start(ctx, specs[0].Name()))

	after := openTestDriver(t, socket) // the restarted agent
	must(t, "Close the old connection", before.Close())

	for i, spec := range specs {
		d, ok := findDomain(t, after, spec.VMID)
		if !ok {
			t.Fatalf("the new connection does not list VM %d", spec.VMID)
		}
		want := Domain{Name: spec.Name(), UUID: DomainUUID(spec.Name()), VMID: spec.VMID, Generation: int64(7 + i), State: StateShutOff}
		if i == 0 {
			want.State = StateRunning
		}
		if d != want {
			t.Errorf("listed %+v, want %+v", d, want)
		}
	}
	// The domain the test driver ships with carries no VirtFlow metadata and is not listed.
	doms, err := after.List(ctx)
	must(t, "List", err)
	for _, d := range doms {
		if d.Name == "test" {
			t.Errorf("List includes the foreign domain %+v", d)
		}
	}
	for _, spec := range specs {
		must(t, "Undefine through the new connection", after.Undefine(ctx, spec.Name()))
	}
}

// TestLibvirtDisklessDomainRoundTrip defines a diskless domain with two NICs and pinned vCPUs
// and reads it back from libvirt.
func TestLibvirtDisklessDomainRoundTrip(t *testing.T) {
	h := openTestDriver(t, libvirtSocket(t))
	ctx := testCtx(t)
	id := newVMID()
	spec := DomainSpec{
		VMID: id, Generation: 3, VCPUs: 2, MemoryMiB: 256, PinnedCPUs: []int{2, 3},
		NICs: []NIC{
			{MAC: "52:54:00:AA:BB:01", Bridge: "br-vlan100"},
			{MAC: "52:54:00:aa:bb:02", Network: "default", Model: "e1000"},
		},
	}
	name := spec.Name()
	cleanupDomain(t, h, name)
	must(t, "Define", h.Define(ctx, spec))
	must(t, "Start", h.Start(ctx, name))

	x, err := h.DomainXML(ctx, name)
	must(t, "DomainXML", err)
	var d libvirtxml.Domain
	must(t, "parse domain XML", d.Unmarshal(x))

	if d.Type != "test" || d.Name != name || d.UUID != DomainUUID(name) {
		t.Errorf("type/name/uuid = %s/%s/%s, want test/%s/%s", d.Type, d.Name, d.UUID, name, DomainUUID(name))
	}
	if d.VCPU == nil || d.VCPU.Value != 2 {
		t.Errorf("vcpu = %+v, want 2", d.VCPU)
	}
	if d.Memory == nil || memKiB(d.Memory.Value, d.Memory.Unit) != 256*1024 {
		t.Errorf("memory = %+v, want 256 MiB", d.Memory)
	}
	if d.CPUTune == nil || len(d.CPUTune.VCPUPin) != 2 ||
		d.CPUTune.VCPUPin[0] != (libvirtxml.DomainCPUTuneVCPUPin{VCPU: 0, CPUSet: "2"}) ||
		d.CPUTune.VCPUPin[1] != (libvirtxml.DomainCPUTuneVCPUPin{VCPU: 1, CPUSet: "3"}) {
		t.Errorf("cputune = %+v, want vcpu 0 on CPU 2 and vcpu 1 on CPU 3", d.CPUTune)
	}
	if len(d.Devices.Disks) != 0 {
		t.Errorf("disks = %+v, want none", d.Devices.Disks)
	}
	ifs := d.Devices.Interfaces
	if len(ifs) != 2 {
		t.Fatalf("interfaces = %+v, want 2", ifs)
	}
	if ifs[0].MAC == nil || ifs[0].MAC.Address != "52:54:00:aa:bb:01" || ifs[0].Model == nil || ifs[0].Model.Type != "virtio" ||
		ifs[0].Source == nil || ifs[0].Source.Bridge == nil || ifs[0].Source.Bridge.Bridge != "br-vlan100" {
		t.Errorf("interface 0 = %s, want bridge br-vlan100, virtio, 52:54:00:aa:bb:01", marshalIface(ifs[0]))
	}
	if ifs[1].MAC == nil || ifs[1].MAC.Address != "52:54:00:aa:bb:02" || ifs[1].Model == nil || ifs[1].Model.Type != "e1000" ||
		ifs[1].Source == nil || ifs[1].Source.Network == nil || ifs[1].Source.Network.Network != "default" {
		t.Errorf("interface 1 = %s, want network default, e1000, 52:54:00:aa:bb:02", marshalIface(ifs[1]))
	}
	if d.Metadata == nil {
		t.Fatal("no <metadata> read back")
	}
	m, ok, err := parseMetadata(d.Metadata.XML, false)
	if err != nil || !ok || m.VMID != id || m.Generation != 3 || m.SpecDigest == "" {
		t.Errorf("metadata %q parsed as %+v, %v, %v; want VM %d generation 3 with a digest", d.Metadata.XML, m, ok, err, id)
	}
	if d.OS == nil || len(d.OS.BootDevices) != 1 || d.OS.BootDevices[0].Dev != "network" {
		t.Errorf("boot = %+v, want network (no disk, NICs)", d.OS)
	}
}

// TestLibvirtDisksRoundTrip defines a domain with a qcow2 disk, a raw block device and a
// CD-ROM and reads the disks back.
func TestLibvirtDisksRoundTrip(t *testing.T) {
	h := openTestDriver(t, libvirtSocket(t))
	ctx := testCtx(t)
	spec := DomainSpec{
		VMID: newVMID(), VCPUs: 1, MemoryMiB: 128,
		Disks: []Disk{
			{Path: "/var/lib/virtflow/volumes/root.qcow2"},
			{Path: "/dev/vg0/data", Format: "raw", Bus: "scsi"},
			{Path: "/var/lib/virtflow/images/seed.iso", Format: "raw", Bus: "sata", Device: "cdrom"},
		},
		Boot: []BootDevice{BootCDROM, BootDisk},
	}
	cleanupDomain(t, h, spec.Name())
	must(t, "Define", h.Define(ctx, spec))
	x, err := h.DomainXML(ctx, spec.Name())
	must(t, "DomainXML", err)
	var d libvirtxml.Domain
	must(t, "parse domain XML", d.Unmarshal(x))
	type disk struct{ device, path, format, dev, bus string }
	var got []disk
	for _, dd := range d.Devices.Disks {
		g := disk{device: dd.Device}
		if dd.Source != nil && dd.Source.File != nil {
			g.path = dd.Source.File.File
		}
		if dd.Source != nil && dd.Source.Block != nil {
			g.path = dd.Source.Block.Dev
		}
		if dd.Driver != nil {
			g.format = dd.Driver.Type
		}
		if dd.Target != nil {
			g.dev, g.bus = dd.Target.Dev, dd.Target.Bus
		}
		got = append(got, g)
	}
	want := []disk{
		{"disk", "/var/lib/virtflow/volumes/root.qcow2", "qcow2", "vda", "virtio"},
		{"disk", "/dev/vg0/data", "raw", "sda", "scsi"},
		{"cdrom", "/var/lib/virtflow/images/seed.iso", "raw", "sdb", "sata"},
	}
	if len(got) != len(want) {
		t.Fatalf("disks = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("disk %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if cd := d.Devices.Disks[2]; cd.ReadOnly == nil {
		t.Error("the CD-ROM is not read-only")
	}
	if d.OS == nil || len(d.OS.BootDevices) != 2 || d.OS.BootDevices[0].Dev != "cdrom" || d.OS.BootDevices[1].Dev != "hd" {
		t.Errorf("boot = %+v, want cdrom then hd", d.OS)
	}
}

// memKiB converts a libvirt memory value to KiB.
func memKiB(v uint, unit string) uint {
	switch strings.ToLower(unit) {
	case "", "k", "kib":
		return v
	case "m", "mib":
		return v * 1024
	case "g", "gib":
		return v * 1024 * 1024
	case "b", "bytes":
		return v / 1024
	}
	return 0
}

// marshalIface renders an interface for a failure message.
func marshalIface(i libvirtxml.DomainInterface) string {
	s, err := i.Marshal()
	if err != nil {
		return err.Error()
	}
	return s
}

// socketProxy forwards connections on a UNIX socket of its own to libvirtd's, and can cut
// them all, as when libvirtd restarts.
type socketProxy struct {
	path     string
	target   string
	ln       net.Listener
	mu       sync.Mutex
	conns    []net.Conn
	accepted int
}

// newSocketProxy listens on a fresh socket and forwards to target until the test ends.
func newSocketProxy(t *testing.T, target string) *socketProxy {
	t.Helper()
	dir, err := os.MkdirTemp("", "vfproxy")
	must(t, "temp dir", err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	p := &socketProxy{path: filepath.Join(dir, "sock"), target: target}
	p.ln, err = net.Listen("unix", p.path)
	must(t, "listen", err)
	var wg sync.WaitGroup
	t.Cleanup(func() {
		p.ln.Close()
		p.cut()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := p.ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("unix", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.accepted++
			p.mu.Unlock()
			wg.Add(2)
			go func() { defer wg.Done(); io.Copy(up, c); up.Close() }()
			go func() { defer wg.Done(); io.Copy(c, up); c.Close() }()
		}
	}()
	return p
}

// cut closes every forwarded connection.
func (p *socketProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// connections returns how many connections the proxy accepted.
func (p *socketProxy) connections() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

// TestLibvirtReconnects: when the connection to libvirtd drops, the next operation reconnects.
func TestLibvirtReconnects(t *testing.T) {
	socket := libvirtSocket(t)
	keep := openTestDriver(t, socket) // keeps the test driver's domains while the proxy cuts
	ctx := testCtx(t)
	proxy := newSocketProxy(t, socket)
	h := openTestDriver(t, proxy.path)
	spec := smallSpec()
	cleanupDomain(t, keep, spec.Name())
	must(t, "Define", h.Define(ctx, spec))
	must(t, "Start", h.Start(ctx, spec.Name()))

	for i := range 2 {
		proxy.cut()
		// Wait until go-libvirt notices, so the test covers both a dead connection being
		// replaced before the call and, on the second round, a call failing midway.
		if i == 0 {
			poll.Until(t, 5*time.Second, func() error {
				if h.conn.IsConnected() {
					return errors.New("go-libvirt still reports the cut connection as connected")
				}
				return nil
			})
		}
		st, err := h.State(ctx, spec.Name())
		if err != nil || st != StateRunning {
			t.Fatalf("round %d: State after the connection dropped = %s, %v; want running", i, st, err)
		}
	}
	if n := proxy.connections(); n != 3 {
		t.Errorf("the proxy saw %d connections, want 3 (the first and one per drop)", n)
	}
	must(t, "Undefine", h.Undefine(ctx, spec.Name()))
}

// TestLibvirtUnreachable: a socket nobody listens on fails NewLibvirt with a clear error.
func TestLibvirtUnreachable(t *testing.T) {
	_, err := NewLibvirt(testCtx(t), LibvirtConfig{Socket: filepath.Join(t.TempDir(), "none"), URI: "test:///default"})
	if err == nil || !strings.Contains(err.Error(), "connect to libvirtd") {
		t.Fatalf("NewLibvirt on a missing socket: err = %v, want a connect error", err)
	}
}

// TestConnectionLost classifies errors: libvirtd's answers and VirtFlow's own errors never
// trigger a reconnect.
func TestConnectionLost(t *testing.T) {
	for _, err := range []error{&NotFoundError{Name: "vf-1"}, ErrConflict, context.Canceled} {
		if transportError(err) {
			t.Errorf("transportError(%v) = true", err)
		}
	}
	if !transportError(io.EOF) || !transportError(&net.OpError{Op: "write", Err: errors.New("broken pipe")}) {
		t.Error("EOF or a write error is not seen as a lost connection")
	}
}

// TestLibvirtDefineIdenticalIsANoOp: defining an identical spec leaves libvirt's definition
// untouched (a title set behind VirtFlow's back survives), a changed spec replaces it.
func TestLibvirtDefineIdenticalIsANoOp(t *testing.T) {
	h := openTestDriver(t, libvirtSocket(t))
	ctx := testCtx(t)
	spec := smallSpec()
	name := spec.Name()
	cleanupDomain(t, h, name)
	must(t, "Define", h.Define(ctx, spec))

	c, err := h.client(ctx)
	must(t, "client", err)
	d, err := c.DomainLookupByName(name)
	must(t, "lookup", err)
	must(t, "set title", c.DomainSetMetadata(d, int32(libvirt.DomainMetadataTitle),
		libvirt.OptString{"marker"}, nil, nil, libvirt.DomainAffectConfig))
	title := func() string {
		x, err := c.DomainGetMetadata(d, int32(libvirt.DomainMetadataTitle), nil, libvirt.DomainAffectConfig)
		if isCode(err, libvirt.ErrNoDomainMetadata) {
			return ""
		}
		must(t, "get title", err)
		return x
	}

	must(t, "Define identical", h.Define(ctx, spec))
	if got := title(); got != "marker" {
		t.Fatalf("an identical Define replaced the definition: title = %q", got)
	}
	spec.Generation++
	must(t, "Define changed", h.Define(ctx, spec))
	if got := title(); got != "" {
		t.Fatalf("a changed Define kept the old definition: title = %q", got)
	}
}

// TestLibvirtUnreadableMetadata: a domain named like VirtFlow's whose metadata does not parse
// is listed at generation 0 and Define repairs it.
func TestLibvirtUnreadableMetadata(t *testing.T) {
	h := openTestDriver(t, libvirtSocket(t))
	ctx := testCtx(t)
	spec := smallSpec()
	name := spec.Name()
	cleanupDomain(t, h, name)
	c, err := h.client(ctx)
	must(t, "client", err)
	_, err = c.DomainDefineXML(`<domain type="test"><name>` + name + `</name><uuid>` + DomainUUID(name) + `</uuid>` +
		`<metadata><vf:vm xmlns:vf="` + MetadataNamespace + `" id="not-a-number"/></metadata>` +
		`<memory unit="MiB">64</memory><vcpu>1</vcpu><os><type>hvm</type></os></domain>`)
	must(t, "define a domain with broken metadata", err)

	d, ok := findDomain(t, h, spec.VMID)
	if !ok || d.Name != name || d.Generation != 0 {
		t.Fatalf("listed %+v (found %v), want %s at generation 0", d, ok, name)
	}
	must(t, "Define over it", h.Define(ctx, spec))
	d, ok = findDomain(t, h, spec.VMID)
	if !ok || d.Generation != spec.Generation {
		t.Fatalf("after Define: listed %+v (found %v), want generation %d", d, ok, spec.Generation)
	}
}
