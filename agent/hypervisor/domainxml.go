package hypervisor

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// Domain types (the type attribute of <domain>).
const (
	// DomainTypeTest is libvirt's test driver (test:///default).
	DomainTypeTest = "test"
	// DomainTypeKVM is QEMU with hardware virtualization (/dev/kvm).
	DomainTypeKVM = "kvm"
	// DomainTypeSimulated is what the simulated hypervisor reports; no domain XML has it.
	DomainTypeSimulated = "simulated"
	// DomainTypeQEMU is QEMU emulating the CPU (TCG): slow, but needs no /dev/kvm.
	DomainTypeQEMU = "qemu"
)

// BuildDomainXML returns the libvirt domain XML of spec for a hypervisor of the given domain
// type (DomainTypeTest, DomainTypeKVM or DomainTypeQEMU). The XML is deterministic: the same
// spec always gives the same document.
func BuildDomainXML(spec DomainSpec, domainType string) (string, error) {
	n, err := spec.normalize()
	if err != nil {
		return "", err
	}
	x, _, err := domainXML(n, domainType)
	return x, err
}

// domainXML returns the XML of a normalized spec and the digest stored in its metadata: a
// hash of the document written without the digest, so that any change of the spec, of its
// generation or of the way VirtFlow writes domains changes it.
func domainXML(n DomainSpec, domainType string) (doc, digest string, err error) {
	switch domainType {
	case DomainTypeTest, DomainTypeKVM, DomainTypeQEMU:
	default:
		return "", "", fmt.Errorf("domain type %q: want test, kvm or qemu", domainType)
	}
	d := domainOf(n, domainType)
	meta := metadata{VMID: n.VMID, Generation: n.Generation}
	if err := setMetadata(d, meta); err != nil {
		return "", "", err
	}
	undigested, err := d.Marshal()
	if err != nil {
		return "", "", fmt.Errorf("marshal domain %s: %w", d.Name, err)
	}
	sum := sha256.Sum256([]byte(undigested))
	meta.SpecDigest = hex.EncodeToString(sum[:16])
	if err := setMetadata(d, meta); err != nil {
		return "", "", err
	}
	doc, err = d.Marshal()
	if err != nil {
		return "", "", fmt.Errorf("marshal domain %s: %w", d.Name, err)
	}
	return doc, meta.SpecDigest, nil
}

// setMetadata puts VirtFlow's metadata element into d.
func setMetadata(d *libvirtxml.Domain, m metadata) error {
	x, err := m.marshal()
	if err != nil {
		return err
	}
	d.Metadata = &libvirtxml.DomainMetadata{XML: x}
	return nil
}

// cpuPeriodMicros is the CFS period of a CPU-time limit (<cputune><period>), 100 ms.
const cpuPeriodMicros = 100000

// cpuList renders sorted CPU numbers as a libvirt cpuset, ranges collapsed: "0-3,6".
func cpuList(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}

// domainOf maps a normalized spec to libvirt's domain structure.
func domainOf(n DomainSpec, domainType string) *libvirtxml.Domain {
	d := &libvirtxml.Domain{
		Type:   domainType,
		Name:   n.Name(),
		UUID:   n.UUID,
		Memory: &libvirtxml.DomainMemory{Value: uint(n.MemoryMiB), Unit: "MiB"},
		VCPU:   &libvirtxml.DomainVCPU{Placement: "static", Value: uint(n.VCPUs)},
		OS: &libvirtxml.DomainOS{
			Type: &libvirtxml.DomainOSType{Type: "hvm"},
		},
		// ACPI lets Shutdown and Reboot reach the guest.
		Features:   &libvirtxml.DomainFeatureList{ACPI: &libvirtxml.DomainFeature{}, APIC: &libvirtxml.DomainFeatureAPIC{}},
		OnPoweroff: "destroy",
		OnReboot:   "restart",
		OnCrash:    "destroy",
		Devices:    &libvirtxml.DomainDeviceList{},
	}
	for _, b := range n.Boot {
		d.OS.BootDevices = append(d.OS.BootDevices, libvirtxml.DomainBootDevice{Dev: string(b)})
	}
	if len(n.SharedCPUs) > 0 {
		d.VCPU.CPUSet = cpuList(n.SharedCPUs)
	}
	if n.CPUQuotaPercent > 0 {
		d.CPUTune = &libvirtxml.DomainCPUTune{
			Period: &libvirtxml.DomainCPUTunePeriod{Value: cpuPeriodMicros},
			Quota:  &libvirtxml.DomainCPUTuneQuota{Value: int64(n.CPUQuotaPercent) * cpuPeriodMicros / 100},
		}
	}
	if len(n.PinnedCPUs) > 0 {
		if d.CPUTune == nil {
			d.CPUTune = &libvirtxml.DomainCPUTune{}
		}
		for i, c := range n.PinnedCPUs {
			d.CPUTune.VCPUPin = append(d.CPUTune.VCPUPin,
				libvirtxml.DomainCPUTuneVCPUPin{VCPU: uint(i), CPUSet: strconv.Itoa(c)})
		}
	}
	// The emulator threads (QEMU's I/O and main loop) stay where the vCPUs are: on a
	// dedicated VM's own CPUs, or within the shared set, never on another VM's pinned CPUs
	// or the host's reserved ones.
	if emu := n.PinnedCPUs; len(emu) > 0 || len(n.SharedCPUs) > 0 {
		if len(emu) == 0 {
			emu = n.SharedCPUs
		}
		if d.CPUTune == nil {
			d.CPUTune = &libvirtxml.DomainCPUTune{}
		}
		d.CPUTune.EmulatorPin = &libvirtxml.DomainCPUTuneEmulatorPin{CPUSet: cpuList(slices.Sorted(slices.Values(emu)))}
	}
	if n.NUMANode != nil {
		d.NUMATune = &libvirtxml.DomainNUMATune{
			Memory: &libvirtxml.DomainNUMATuneMemory{Mode: "strict", Nodeset: strconv.Itoa(*n.NUMANode)},
		}
	}

	used := map[string]int{} // target prefix -> disks so far
	scsi := false
	for _, disk := range n.Disks {
		prefix := diskBusPrefix[disk.Bus]
		dev := prefix + diskLetters(used[prefix])
		used[prefix]++
		scsi = scsi || disk.Bus == "scsi"
		dd := diskElement(disk, dev)
		d.Devices.Disks = append(d.Devices.Disks, dd)
	}
	if scsi {
		// libvirt's default SCSI controller is an emulated LSI card; virtio-scsi is the fast one.
		zero := uint(0)
		d.Devices.Controllers = append(d.Devices.Controllers,
			libvirtxml.DomainController{Type: "scsi", Index: &zero, Model: "virtio-scsi"})
	}

	for _, nic := range n.NICs {
		src := &libvirtxml.DomainInterfaceSource{}
		var target *libvirtxml.DomainInterfaceTarget
		switch {
		case nic.Tap != "":
			src.Ethernet = &libvirtxml.DomainInterfaceSourceEthernet{}
			target = &libvirtxml.DomainInterfaceTarget{Dev: nic.Tap}
		case nic.Bridge != "":
			src.Bridge = &libvirtxml.DomainInterfaceSourceBridge{Bridge: nic.Bridge}
		default:
			src.Network = &libvirtxml.DomainInterfaceSourceNetwork{Network: nic.Network}
		}
		iface := libvirtxml.DomainInterface{
			MAC:    &libvirtxml.DomainInterfaceMAC{Address: nic.MAC},
			Source: src,
			Target: target,
			Model:  &libvirtxml.DomainInterfaceModel{Type: nic.Model},
		}
		if nic.BandwidthMbps > 0 {
			// libvirt's average is in kilobytes (1024 bytes) per second.
			kBps := nicKBps(nic.BandwidthMbps)
			iface.Bandwidth = &libvirtxml.DomainInterfaceBandwidth{
				Inbound:  &libvirtxml.DomainInterfaceBandwidthParams{Average: &kBps},
				Outbound: &libvirtxml.DomainInterfaceBandwidthParams{Average: &kBps},
			}
		}
		d.Devices.Interfaces = append(d.Devices.Interfaces, iface)
	}

	if domainType != DomainTypeTest {
		// A serial console (virsh console) and no graphics: hosts are headless.
		zero := uint(0)
		d.Devices.Serials = []libvirtxml.DomainSerial{{
			Source: &libvirtxml.DomainChardevSource{Pty: &libvirtxml.DomainChardevSourcePty{}},
			Target: &libvirtxml.DomainSerialTarget{Port: &zero},
		}}
		// The QEMU guest agent's channel: libvirt picks the socket's path.
		d.Devices.Channels = []libvirtxml.DomainChannel{{
			Source: &libvirtxml.DomainChardevSource{UNIX: &libvirtxml.DomainChardevSourceUNIX{Mode: "bind"}},
			Target: &libvirtxml.DomainChannelTarget{VirtIO: &libvirtxml.DomainChannelTargetVirtIO{Name: GuestAgentChannel}},
		}}
	}
	return d
}

// nicKBps is mbps megabits (10^6 bits) per second in libvirt's bandwidth unit, kibibytes per
// second, rounded down but at least 1.
func nicKBps(mbps int) int {
	return max(int(int64(mbps)*1_000_000/8/1024), 1)
}

// diskLetters returns the suffix of the i-th disk's target name: a…z, aa…zz, like Linux.
func diskLetters(i int) string {
	s := ""
	for i++; i > 0; i = (i - 1) / 26 {
		s = string(rune('a'+(i-1)%26)) + s
	}
	return s
}

// diskElement is the domain XML element of disk on target dev (e.g. vdb).
func diskElement(disk Disk, dev string) libvirtxml.DomainDisk {
	src := &libvirtxml.DomainDiskSource{}
	if strings.HasPrefix(disk.Path, "/dev/") {
		src.Block = &libvirtxml.DomainDiskSourceBlock{Dev: disk.Path}
	} else {
		src.File = &libvirtxml.DomainDiskSourceFile{File: disk.Path}
	}
	dd := libvirtxml.DomainDisk{
		Device: disk.Device,
		Driver: &libvirtxml.DomainDiskDriver{Name: "qemu", Type: disk.Format},
		Source: src,
		Target: &libvirtxml.DomainDiskTarget{Dev: dev, Bus: disk.Bus},
	}
	if disk.ReadOnly {
		dd.ReadOnly = &libvirtxml.DomainDiskReadOnly{}
	}
	if b := disk.Backing; b != nil {
		dd.BackingStore = &libvirtxml.DomainDiskBackingStore{
			Format: &libvirtxml.DomainDiskFormat{Type: b.Format},
			Source: &libvirtxml.DomainDiskSource{File: &libvirtxml.DomainDiskSourceFile{File: b.Path}},
		}
	}
	if disk.IOPS > 0 || disk.MBps > 0 {
		dd.IOTune = &libvirtxml.DomainDiskIOTune{TotalIopsSec: uint64(disk.IOPS), TotalBytesSec: uint64(disk.MBps) * 1_000_000}
	}
	return dd
}
