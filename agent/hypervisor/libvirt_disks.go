package hypervisor

import (
	"context"
	"fmt"
	"slices"

	"github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"
)

// liveDomain reads the domain's XML as libvirt holds it now (the running instance's while
// it runs, the definition otherwise).
func liveDomain(c *libvirt.Libvirt, d libvirt.Domain) (*libvirtxml.Domain, error) {
	x, err := c.DomainGetXMLDesc(d, 0)
	if err != nil {
		return nil, notFound(err, d.Name)
	}
	var dom libvirtxml.Domain
	if err := dom.Unmarshal(x); err != nil {
		return nil, fmt.Errorf("parse XML of domain %s: %w", d.Name, err)
	}
	return &dom, nil
}

// diskPath is the file or block device a disk element points at.
func diskPath(dd libvirtxml.DomainDisk) string {
	switch {
	case dd.Source == nil:
		return ""
	case dd.Source.File != nil:
		return dd.Source.File.File
	case dd.Source.Block != nil:
		return dd.Source.Block.Dev
	}
	return ""
}

// Disks returns the domain's disks as they are now; see [Hypervisor.Disks].
func (h *Libvirt) Disks(ctx context.Context, name string) ([]Disk, error) {
	var out []Disk
	err := h.do(ctx, func(c *libvirt.Libvirt) error {
		d, err := lookup(c, name)
		if err != nil {
			return err
		}
		dom, err := liveDomain(c, d)
		if err != nil {
			return err
		}
		out = out[:0]
		if dom.Devices == nil {
			return nil
		}
		for _, dd := range dom.Devices.Disks {
			disk := Disk{Path: diskPath(dd), Device: dd.Device, ReadOnly: dd.ReadOnly != nil}
			if dd.Driver != nil {
				disk.Format = dd.Driver.Type
			}
			if dd.Target != nil {
				disk.Bus = dd.Target.Bus
			}
			out = append(out, disk)
		}
		return nil
	})
	return out, wrap("get disks of", name, err)
}

// AttachDisk hot-plugs a disk into the running domain; see [Hypervisor.AttachDisk].
func (h *Libvirt) AttachDisk(ctx context.Context, name string, disk Disk) error {
	n, err := DomainSpec{Disks: []Disk{disk}}.normalizeDisks()
	if err != nil {
		return err
	}
	disk = n[0]
	return wrap("attach disk to", name, h.do(ctx, func(c *libvirt.Libvirt) error {
		d, err := lookup(c, name)
		if err != nil {
			return err
		}
		if st, err := stateOf(c, d); err != nil || !st.Active() {
			return err
		}
		dom, err := liveDomain(c, d)
		if err != nil {
			return err
		}
		var disks []libvirtxml.DomainDisk
		if dom.Devices != nil {
			disks = dom.Devices.Disks
		}
		if slices.ContainsFunc(disks, func(dd libvirtxml.DomainDisk) bool { return diskPath(dd) == disk.Path }) {
			return nil
		}
		prefix := diskBusPrefix[disk.Bus]
		dev := ""
		for i := 0; dev == ""; i++ {
			try := prefix + diskLetters(i)
			if !slices.ContainsFunc(disks, func(dd libvirtxml.DomainDisk) bool { return dd.Target != nil && dd.Target.Dev == try }) {
				dev = try
			}
		}
		el := diskElement(disk, dev)
		x, err := el.Marshal()
		if err != nil {
			return fmt.Errorf("marshal disk: %w", err)
		}
		return unsupported(c.DomainAttachDeviceFlags(d, x, uint32(libvirt.DomainAffectLive)))
	}))
}

// DetachDisk hot-unplugs a disk from the running domain; see [Hypervisor.DetachDisk].
func (h *Libvirt) DetachDisk(ctx context.Context, name, path string) error {
	return wrap("detach disk from", name, h.do(ctx, func(c *libvirt.Libvirt) error {
		d, err := lookup(c, name)
		if err != nil {
			return err
		}
		if st, err := stateOf(c, d); err != nil || !st.Active() {
			return err
		}
		dom, err := liveDomain(c, d)
		if err != nil || dom.Devices == nil {
			return err
		}
		i := slices.IndexFunc(dom.Devices.Disks, func(dd libvirtxml.DomainDisk) bool { return diskPath(dd) == path })
		if i < 0 {
			return nil
		}
		x, err := dom.Devices.Disks[i].Marshal()
		if err != nil {
			return fmt.Errorf("marshal disk: %w", err)
		}
		return unsupported(c.DomainDetachDeviceFlags(d, x, uint32(libvirt.DomainAffectLive)))
	}))
}

// unsupported maps libvirt's "not supported" errors to ErrUnsupported.
func unsupported(err error) error {
	if isCode(err, libvirt.ErrNoSupport, libvirt.ErrOperationUnsupported, libvirt.ErrArgumentUnsupported) {
		return fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	return err
}
