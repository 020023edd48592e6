package hypervisor

import (
	"net"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/google/uuid"
)

// nameRE bounds the names VirtFlow passes to libvirt (bridge, network, model names).
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$`)

// diskBusPrefix maps a disk bus to the prefix of its target device names (vda, sda, hda).
var diskBusPrefix = map[string]string{"virtio": "vd", "scsi": "sd", "sata": "sd", "ide": "hd"}

// normalize validates spec and returns a copy with every default filled in (UUID, disk
// format, bus and device, NIC model, boot order) and MACs and UUID in canonical lower case,
// so that two specs meaning the same domain compare equal. Errors match ErrInvalidSpec.
func (s DomainSpec) normalize() (DomainSpec, error) {
	n := s
	if s.VMID <= 0 {
		return n, invalidSpec("VM id %d: must be positive", s.VMID)
	}
	if s.Generation < 0 {
		return n, invalidSpec("generation %d: must not be negative", s.Generation)
	}
	if s.UUID == "" {
		n.UUID = DomainUUID(s.Name())
	} else {
		u, err := uuid.Parse(s.UUID)
		if err != nil {
			return n, invalidSpec("UUID %q: %v", s.UUID, err)
		}
		n.UUID = u.String()
	}
	if s.VCPUs < 1 {
		return n, invalidSpec("vCPUs %d: at least 1", s.VCPUs)
	}
	if s.MemoryMiB < 1 {
		return n, invalidSpec("memory %d MiB: at least 1", s.MemoryMiB)
	}
	if len(s.PinnedCPUs) > 0 {
		if len(s.PinnedCPUs) != s.VCPUs {
			return n, invalidSpec("%d pinned CPUs for %d vCPUs: need one per vCPU", len(s.PinnedCPUs), s.VCPUs)
		}
		seen := make(map[int]bool, len(s.PinnedCPUs))
		for _, c := range s.PinnedCPUs {
			if c < 0 {
				return n, invalidSpec("pinned CPU %d: must not be negative", c)
			}
			if seen[c] {
				return n, invalidSpec("pinned CPU %d: listed twice (a dedicated vCPU needs its own CPU)", c)
			}
			seen[c] = true
		}
		n.PinnedCPUs = slices.Clone(s.PinnedCPUs)
		n.SharedCPUs = nil
	} else {
		n.PinnedCPUs = nil
		for _, c := range s.SharedCPUs {
			if c < 0 {
				return n, invalidSpec("shared CPU %d: must not be negative", c)
			}
		}
		n.SharedCPUs = slices.Compact(slices.Sorted(slices.Values(s.SharedCPUs)))
		if len(n.SharedCPUs) == 0 {
			n.SharedCPUs = nil
		}
	}
	if s.NUMANode != nil {
		if *s.NUMANode < 0 {
			return n, invalidSpec("NUMA node %d: must not be negative", *s.NUMANode)
		}
		v := *s.NUMANode
		n.NUMANode = &v
	}
	if s.CPUQuotaPercent < 0 || s.CPUQuotaPercent > 100 {
		return n, invalidSpec("CPU quota %d%%: want 0 to 100", s.CPUQuotaPercent)
	}
	if s.CPUQuotaPercent == 100 {
		n.CPUQuotaPercent = 0
	}

	disks, err := s.normalizeDisks()
	if err != nil {
		return n, err
	}
	n.Disks = disks

	n.NICs = nil
	macs := map[string]bool{}
	for i, nic := range s.NICs {
		hw, err := net.ParseMAC(nic.MAC)
		if err != nil || len(hw) != 6 {
			return n, invalidSpec("NIC %d: MAC %q: want six bytes like 52:54:00:12:34:56", i, nic.MAC)
		}
		if hw[0]&1 == 1 {
			return n, invalidSpec("NIC %d: MAC %s is a multicast address", i, hw)
		}
		nic.MAC = hw.String()
		if macs[nic.MAC] {
			return n, invalidSpec("NIC %d: MAC %s used twice", i, nic.MAC)
		}
		macs[nic.MAC] = true
		if nic.Model == "" {
			nic.Model = "virtio"
		}
		if !nameRE.MatchString(nic.Model) {
			return n, invalidSpec("NIC %d: model %q", i, nic.Model)
		}
		if nic.BandwidthMbps < 0 {
			return n, invalidSpec("NIC %d: bandwidth %d Mbit/s: must not be negative", i, nic.BandwidthMbps)
		}
		set := 0
		for _, v := range []string{nic.Bridge, nic.Network, nic.Tap} {
			if v != "" {
				set++
			}
		}
		switch {
		case set > 1:
			return n, invalidSpec("NIC %d: more than one of bridge %q, network %q and tap %q: want one", i, nic.Bridge, nic.Network, nic.Tap)
		case nic.Tap != "" && (!nameRE.MatchString(nic.Tap) || len(nic.Tap) > 15):
			return n, invalidSpec("NIC %d: tap name %q", i, nic.Tap)
		case nic.Tap != "":
		case nic.Bridge != "" && !nameRE.MatchString(nic.Bridge):
			return n, invalidSpec("NIC %d: bridge name %q", i, nic.Bridge)
		case nic.Network != "" && !nameRE.MatchString(nic.Network):
			return n, invalidSpec("NIC %d: network name %q", i, nic.Network)
		case nic.Bridge == "" && nic.Network == "":
			return n, invalidSpec("NIC %d: needs a bridge or a network (or a tap)", i)
		}
		n.NICs = append(n.NICs, nic)
	}

	n.Boot = nil
	for _, b := range s.Boot {
		switch b {
		case BootDisk, BootCDROM, BootNetwork, BootFloppy:
		default:
			return n, invalidSpec("boot device %q: want hd, cdrom, network or fd", b)
		}
		if slices.Contains(n.Boot, b) {
			return n, invalidSpec("boot device %q listed twice", b)
		}
		n.Boot = append(n.Boot, b)
	}
	if len(n.Boot) == 0 {
		switch {
		case len(n.Disks) > 0 && n.Disks[0].Device == "cdrom":
			n.Boot = []BootDevice{BootCDROM}
		case len(n.Disks) > 0:
			n.Boot = []BootDevice{BootDisk}
		case len(n.NICs) > 0:
			n.Boot = []BootDevice{BootNetwork}
		default:
			n.Boot = []BootDevice{BootDisk}
		}
	}
	return n, nil
}

// Validate reports whether spec describes a domain Define would accept; the error matches
// ErrInvalidSpec and names the offending field.
func (s DomainSpec) Validate() error {
	_, err := s.normalize()
	return err
}

// normalizeDisks validates the spec's disks and fills in their defaults; errors match
// ErrInvalidSpec.
func (s DomainSpec) normalizeDisks() ([]Disk, error) {
	var out []Disk
	for i, d := range s.Disks {
		if d.Path == "" || !filepath.IsAbs(d.Path) || strings.ContainsAny(d.Path, "\x00\n") {
			return nil, invalidSpec("disk %d: path %q must be absolute", i, d.Path)
		}
		if d.Format == "" {
			d.Format = "qcow2"
		}
		if d.Format != "qcow2" && d.Format != "raw" {
			return nil, invalidSpec("disk %d: format %q: want qcow2 or raw", i, d.Format)
		}
		if d.Bus == "" {
			d.Bus = "virtio"
		}
		if _, ok := diskBusPrefix[d.Bus]; !ok {
			return nil, invalidSpec("disk %d: bus %q: want virtio, scsi, sata or ide", i, d.Bus)
		}
		if d.Device == "" {
			d.Device = "disk"
		}
		switch d.Device {
		case "disk":
		case "cdrom":
			d.ReadOnly = true
			if d.Bus == "virtio" {
				return nil, invalidSpec("disk %d: a cdrom cannot be on the virtio bus (use sata, scsi or ide)", i)
			}
		default:
			return nil, invalidSpec("disk %d: device %q: want disk or cdrom", i, d.Device)
		}
		if d.Backing != nil {
			b := *d.Backing
			if d.Format != "qcow2" {
				return nil, invalidSpec("disk %d: only a qcow2 disk has a backing file", i)
			}
			if b.Path == "" || !filepath.IsAbs(b.Path) || strings.ContainsAny(b.Path, "\x00\n") {
				return nil, invalidSpec("disk %d: backing path %q must be absolute", i, b.Path)
			}
			if b.Format == "" {
				b.Format = "qcow2"
			}
			if b.Format != "qcow2" && b.Format != "raw" {
				return nil, invalidSpec("disk %d: backing format %q: want qcow2 or raw", i, b.Format)
			}
			d.Backing = &b
		}
		if d.IOPS < 0 || d.MBps < 0 {
			return nil, invalidSpec("disk %d: IO limits %d IOPS, %d MB/s: must not be negative", i, d.IOPS, d.MBps)
		}
		out = append(out, d)
	}
	return out, nil
}
