package hypervisor

import (
	"errors"
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

func TestDomainName(t *testing.T) {
	if got := DomainName(42); got != "vf-42" {
		t.Fatalf("DomainName(42) = %q", got)
	}
	for _, tc := range []struct {
		name string
		id   int64
		ok   bool
	}{
		{"vf-42", 42, true},
		{"vf-9223372036854775807", 9223372036854775807, true},
		{"vf-0", 0, false},
		{"vf--1", 0, false},
		{"vf-+1", 0, false},
		{"vf-042", 0, false},
		{"vf-", 0, false},
		{"vf-4x", 0, false},
		{"test", 0, false},
	} {
		id, ok := ParseDomainName(tc.name)
		if id != tc.id || ok != tc.ok {
			t.Errorf("ParseDomainName(%q) = %d, %v; want %d, %v", tc.name, id, ok, tc.id, tc.ok)
		}
	}
	// The UUID must be the same on every host and in every release (it names the domain to
	// libvirt), so it is pinned to a value, not compared with a second call.
	if got, want := DomainUUID("vf-1"), "8523429d-f38f-5e20-9a84-cc531926678a"; got != want {
		t.Errorf("DomainUUID(vf-1) = %s, want %s", got, want)
	}
	if DomainUUID("vf-1") == DomainUUID("vf-2") {
		t.Error("DomainUUID gives two names the same UUID")
	}
}

func TestDiskLetters(t *testing.T) {
	for i, want := range map[int]string{0: "a", 1: "b", 25: "z", 26: "aa", 27: "ab", 701: "zz", 702: "aaa"} {
		if got := diskLetters(i); got != want {
			t.Errorf("diskLetters(%d) = %q, want %q", i, got, want)
		}
	}
}

func TestValidate(t *testing.T) {
	valid := func() DomainSpec {
		return DomainSpec{VMID: 1, VCPUs: 2, MemoryMiB: 512, PinnedCPUs: []int{4, 5},
			Disks: []Disk{{Path: "/var/lib/x.qcow2"}}, NICs: []NIC{{MAC: "52:54:00:00:00:01", Bridge: "br0"}}}
	}
	if err := valid().Validate(); err != nil {
		t.Fatalf("valid spec: %v", err)
	}
	for _, tc := range []struct {
		name   string
		change func(*DomainSpec)
		field  string // a word the error must contain
	}{
		{"zero VM id", func(s *DomainSpec) { s.VMID = 0 }, "VM id"},
		{"negative generation", func(s *DomainSpec) { s.Generation = -1 }, "generation"},
		{"bad UUID", func(s *DomainSpec) { s.UUID = "nope" }, "UUID"},
		{"no vCPU", func(s *DomainSpec) { s.VCPUs = 0; s.PinnedCPUs = nil }, "vCPUs"},
		{"no memory", func(s *DomainSpec) { s.MemoryMiB = 0 }, "memory"},
		{"pinning short", func(s *DomainSpec) { s.PinnedCPUs = []int{4} }, "pinned"},
		{"pinning twice", func(s *DomainSpec) { s.PinnedCPUs = []int{4, 4} }, "pinned"},
		{"pinning negative", func(s *DomainSpec) { s.PinnedCPUs = []int{-1, 4} }, "pinned"},
		{"relative disk", func(s *DomainSpec) { s.Disks[0].Path = "x.qcow2" }, "disk 0"},
		{"disk format", func(s *DomainSpec) { s.Disks[0].Format = "vmdk" }, "format"},
		{"disk bus", func(s *DomainSpec) { s.Disks[0].Bus = "usb" }, "bus"},
		{"disk device", func(s *DomainSpec) { s.Disks[0].Device = "floppy" }, "device"},
		{"virtio cdrom", func(s *DomainSpec) { s.Disks[0].Device = "cdrom" }, "cdrom"},
		{"bad MAC", func(s *DomainSpec) { s.NICs[0].MAC = "52:54:00:00:01" }, "MAC"},
		{"multicast MAC", func(s *DomainSpec) { s.NICs[0].MAC = "01:00:5e:00:00:01" }, "multicast"},
		{"MAC twice", func(s *DomainSpec) { s.NICs = append(s.NICs, NIC{MAC: "52:54:00:00:00:01", Bridge: "br1"}) }, "twice"},
		{"no source", func(s *DomainSpec) { s.NICs[0].Bridge = "" }, "bridge or a network"},
		{"two sources", func(s *DomainSpec) { s.NICs[0].Network = "default" }, "want one"},
		{"bad bridge", func(s *DomainSpec) { s.NICs[0].Bridge = "br0'/><x" }, "bridge"},
		{"bad boot", func(s *DomainSpec) { s.Boot = []BootDevice{"usb"} }, "boot"},
		{"boot twice", func(s *DomainSpec) { s.Boot = []BootDevice{BootDisk, BootDisk} }, "twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := valid()
			tc.change(&s)
			err := s.Validate()
			if !errors.Is(err, ErrInvalidSpec) || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("Validate = %v, want ErrInvalidSpec naming %q", err, tc.field)
			}
		})
	}
}

func TestDefaultBoot(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec DomainSpec
		want BootDevice
	}{
		{"disk", DomainSpec{Disks: []Disk{{Path: "/a"}}, NICs: []NIC{{MAC: "52:54:00:00:00:01", Bridge: "b"}}}, BootDisk},
		{"cdrom first", DomainSpec{Disks: []Disk{{Path: "/a.iso", Device: "cdrom", Bus: "sata"}}}, BootCDROM},
		{"diskless with NIC", DomainSpec{NICs: []NIC{{MAC: "52:54:00:00:00:01", Bridge: "b"}}}, BootNetwork},
		{"nothing", DomainSpec{}, BootDisk},
	} {
		tc.spec.VMID, tc.spec.VCPUs, tc.spec.MemoryMiB = 1, 1, 1
		n, err := tc.spec.normalize()
		if err != nil || len(n.Boot) != 1 || n.Boot[0] != tc.want {
			t.Errorf("%s: boot = %v, %v; want %s", tc.name, n.Boot, err, tc.want)
		}
	}
}

// parseBuilt builds and parses the XML of spec.
func parseBuilt(t *testing.T, spec DomainSpec, domainType string) (*libvirtxml.Domain, string) {
	t.Helper()
	x, err := BuildDomainXML(spec, domainType)
	if err != nil {
		t.Fatalf("BuildDomainXML: %v", err)
	}
	var d libvirtxml.Domain
	if err := d.Unmarshal(x); err != nil {
		t.Fatalf("parse built XML: %v\n%s", err, x)
	}
	return &d, x
}

func TestBuildDomainXML(t *testing.T) {
	spec := DomainSpec{VMID: 9, Generation: 4, VCPUs: 2, MemoryMiB: 1024,
		Disks: []Disk{{Path: "/v/a.qcow2"}, {Path: "/v/b.raw", Format: "raw"}, {Path: "/dev/sdz", Format: "raw", Bus: "scsi"}},
		NICs:  []NIC{{MAC: "52:54:00:00:00:09", Bridge: "br0"}}}
	d, x := parseBuilt(t, spec, DomainTypeKVM)
	if x2, _ := BuildDomainXML(spec, DomainTypeKVM); x2 != x {
		t.Error("BuildDomainXML is not deterministic")
	}
	if d.Type != "kvm" || d.Name != "vf-9" || d.Memory.Value != 1024 || d.Memory.Unit != "MiB" || d.CPUTune != nil {
		t.Errorf("type %s name %s memory %+v cputune %+v", d.Type, d.Name, d.Memory, d.CPUTune)
	}
	var devs []string
	for _, dd := range d.Devices.Disks {
		devs = append(devs, dd.Target.Dev)
	}
	if strings.Join(devs, ",") != "vda,vdb,sda" {
		t.Errorf("disk targets %v, want vda,vdb,sda", devs)
	}
	if d.Devices.Disks[2].Source.Block == nil || d.Devices.Disks[2].Source.Block.Dev != "/dev/sdz" {
		t.Errorf("a /dev path is not a block source: %+v", d.Devices.Disks[2].Source)
	}
	if len(d.Devices.Controllers) != 1 || d.Devices.Controllers[0].Model != "virtio-scsi" {
		t.Errorf("controllers %+v, want one virtio-scsi for the SCSI disk", d.Devices.Controllers)
	}
	if len(d.Devices.Serials) != 1 || d.Features == nil || d.Features.ACPI == nil {
		t.Errorf("a kvm domain needs a serial console and ACPI: serials %+v features %+v", d.Devices.Serials, d.Features)
	}
	m, ok, err := parseMetadata(d.Metadata.XML, false)
	if err != nil || !ok || m.VMID != 9 || m.Generation != 4 || len(m.SpecDigest) != 32 {
		t.Errorf("metadata %+v, %v, %v", m, ok, err)
	}

	td, _ := parseBuilt(t, spec, DomainTypeTest)
	if len(td.Devices.Serials) != 0 {
		t.Error("a test-driver domain got a serial console")
	}
	if _, err := BuildDomainXML(spec, "xen"); err == nil {
		t.Error("BuildDomainXML accepted domain type xen")
	}
	if _, err := BuildDomainXML(DomainSpec{}, DomainTypeKVM); !errors.Is(err, ErrInvalidSpec) {
		t.Errorf("BuildDomainXML of an empty spec: err = %v, want ErrInvalidSpec", err)
	}
}

func TestSpecDigest(t *testing.T) {
	base := DomainSpec{VMID: 3, Generation: 1, VCPUs: 1, MemoryMiB: 64}
	n, _ := base.normalize()
	_, d1, _ := domainXML(n, DomainTypeTest)
	_, again, _ := domainXML(n, DomainTypeTest)
	if d1 != again {
		t.Fatal("the digest of the same spec changed")
	}
	for name, change := range map[string]func(*DomainSpec){
		"generation": func(s *DomainSpec) { s.Generation = 2 },
		"memory":     func(s *DomainSpec) { s.MemoryMiB = 128 },
		"NIC":        func(s *DomainSpec) { s.NICs = []NIC{{MAC: "52:54:00:00:00:03", Bridge: "br0"}} },
	} {
		s := base
		change(&s)
		n, _ := s.normalize()
		if _, d2, _ := domainXML(n, DomainTypeTest); d2 == d1 {
			t.Errorf("changing the %s left the digest unchanged", name)
		}
	}
	if _, d2, _ := domainXML(n, DomainTypeKVM); d2 == d1 {
		t.Error("changing the domain type left the digest unchanged")
	}
}

func TestParseMetadata(t *testing.T) {
	for _, tc := range []struct {
		name, xml string
		bare, ok  bool
	}{
		{"ours among others", `<other:x xmlns:other="urn:o"><y/></other:x><vf:vm xmlns:vf="` + MetadataNamespace + `" id="5" generation="6" spec="d"/>`, false, true},
		{"default namespace", `<vm xmlns="` + MetadataNamespace + `" id="5" generation="6" spec="d"/>`, false, true},
		{"bare as DomainGetMetadata returns it", `<vm id="5" generation="6" spec="d"/>`, true, true},
		{"bare vm not ours outside DomainGetMetadata", `<vm id="5" generation="6" spec="d"/>`, false, false},
		{"another namespace", `<x:vm xmlns:x="urn:other" id="5"/>`, false, false},
		{"empty", ``, false, false},
	} {
		m, ok, err := parseMetadata(tc.xml, tc.bare)
		if err != nil || ok != tc.ok || (ok && m != (metadata{VMID: 5, Generation: 6, SpecDigest: "d"})) {
			t.Errorf("%s: parseMetadata = %+v, %v, %v; want ok %v", tc.name, m, ok, err, tc.ok)
		}
	}
	if _, _, err := parseMetadata(`<vm id="x"/>`, true); err == nil {
		t.Error("a non-numeric id parsed")
	}
}

func BenchmarkBuildDomainXML(b *testing.B) {
	spec := DomainSpec{VMID: 9, Generation: 4, VCPUs: 4, MemoryMiB: 8192, PinnedCPUs: []int{0, 1, 2, 3},
		Disks: []Disk{{Path: "/v/a.qcow2"}}, NICs: []NIC{{MAC: "52:54:00:00:00:09", Bridge: "br0"}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := BuildDomainXML(spec, DomainTypeKVM); err != nil {
			b.Fatal(err)
		}
	}
}
