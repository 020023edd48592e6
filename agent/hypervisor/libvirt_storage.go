package hypervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"
)

// lookupPool finds a pool by name.
func lookupPool(c *libvirt.Libvirt, name string) (libvirt.StoragePool, error) {
	p, err := c.StoragePoolLookupByName(name)
	if isCode(err, libvirt.ErrNoStoragePool) {
		return p, poolNotFound(name)
	}
	return p, err
}

// lookupVolume finds a volume of a pool by name.
func lookupVolume(c *libvirt.Libvirt, pool, name string) (libvirt.StorageVol, error) {
	p, err := lookupPool(c, pool)
	if err != nil {
		return libvirt.StorageVol{}, err
	}
	v, err := c.StorageVolLookupByName(p, name)
	if isCode(err, libvirt.ErrNoStorageVol) {
		return v, volumeNotFound(pool, name)
	}
	return v, err
}

// PoolInfo returns the pool's size as libvirt reports it (StoragePoolGetInfo); see
// [Storage.PoolInfo].
func (h *Libvirt) PoolInfo(ctx context.Context, pool string) (PoolInfo, error) {
	var info PoolInfo
	err := h.do(ctx, func(c *libvirt.Libvirt) error {
		p, err := lookupPool(c, pool)
		if err != nil {
			return err
		}
		_, capacity, alloc, avail, err := c.StoragePoolGetInfo(p)
		if err != nil {
			return fmt.Errorf("read pool %s: %w", pool, err)
		}
		info = PoolInfo{CapacityBytes: int64(capacity), AllocationBytes: int64(alloc), AvailableBytes: int64(avail)}
		return nil
	})
	return info, err
}

// EnsurePool makes the directory pool exist and run; see [Storage.EnsurePool].
func (h *Libvirt) EnsurePool(ctx context.Context, spec PoolSpec) error {
	if err := spec.validate(); err != nil {
		return err
	}
	return h.do(ctx, func(c *libvirt.Libvirt) error {
		p, err := lookupPool(c, spec.Name)
		if err != nil && !isNotFound(err) {
			return fmt.Errorf("look up pool %s: %w", spec.Name, err)
		}
		if err != nil {
			doc, err := (&libvirtxml.StoragePool{Type: "dir", Name: spec.Name,
				Target: &libvirtxml.StoragePoolTarget{Path: spec.Path}}).Marshal()
			if err != nil {
				return err
			}
			if p, err = c.StoragePoolDefineXML(doc, 0); err != nil {
				return fmt.Errorf("define pool %s: %w", spec.Name, err)
			}
			// Build makes the directory; an existing one is fine.
			if err := c.StoragePoolBuild(p, 0); err != nil && !isCode(err, libvirt.ErrStoragePoolBuilt, libvirt.ErrNoSupport) {
				return fmt.Errorf("build pool %s: %w", spec.Name, err)
			}
			if err := c.StoragePoolSetAutostart(p, 1); err != nil && !isCode(err, libvirt.ErrNoSupport) {
				return fmt.Errorf("autostart pool %s: %w", spec.Name, err)
			}
		}
		active, err := c.StoragePoolIsActive(p)
		if err != nil {
			return fmt.Errorf("pool %s: %w", spec.Name, err)
		}
		if active == 0 {
			if err := c.StoragePoolCreate(p, 0); err != nil && !isCode(err, libvirt.ErrOperationInvalid) {
				return fmt.Errorf("start pool %s: %w", spec.Name, err)
			}
		}
		return nil
	})
}

// CreateVolume creates a volume or returns the existing one; see [Storage.CreateVolume].
func (h *Libvirt) CreateVolume(ctx context.Context, pool string, spec VolumeSpec) (Volume, error) {
	n, err := spec.normalize()
	if err != nil {
		return Volume{}, err
	}
	x := &libvirtxml.StorageVolume{
		Name:     n.Name,
		Capacity: &libvirtxml.StorageVolumeSize{Unit: "bytes", Value: uint64(n.CapacityBytes)},
		Target:   &libvirtxml.StorageVolumeTarget{Format: &libvirtxml.StorageVolumeTargetFormat{Type: n.Format}},
	}
	if n.Format == "raw" {
		// Sparse: a raw volume takes room only as it is written.
		x.Allocation = &libvirtxml.StorageVolumeSize{Unit: "bytes", Value: 0}
	}
	if n.Backing != nil {
		x.BackingStore = &libvirtxml.StorageVolumeBackingStore{Path: n.Backing.Path,
			Format: &libvirtxml.StorageVolumeTargetFormat{Type: n.Backing.Format}}
	}
	doc, err := x.Marshal()
	if err != nil {
		return Volume{}, err
	}
	var out Volume
	err = h.do(ctx, func(c *libvirt.Libvirt) error {
		p, err := lookupPool(c, pool)
		if err != nil {
			return err
		}
		v, err := c.StorageVolLookupByName(p, n.Name)
		if isCode(err, libvirt.ErrNoStorageVol) {
			v, err = c.StorageVolCreateXML(p, doc, 0)
			if isCode(err, libvirt.ErrStorageVolExist) { // created meanwhile
				v, err = c.StorageVolLookupByName(p, n.Name)
			}
		}
		if err != nil {
			return fmt.Errorf("create volume %s/%s: %w", pool, n.Name, err)
		}
		out, err = describeVolume(c, v)
		return err
	})
	return out, err
}

// describeVolume reads a volume's path, sizes, format and backing file.
func describeVolume(c *libvirt.Libvirt, v libvirt.StorageVol) (Volume, error) {
	doc, err := c.StorageVolGetXMLDesc(v, 0)
	if isCode(err, libvirt.ErrNoStorageVol) {
		return Volume{}, volumeNotFound(v.Pool, v.Name)
	}
	if err != nil {
		return Volume{}, fmt.Errorf("read volume %s/%s: %w", v.Pool, v.Name, err)
	}
	var x libvirtxml.StorageVolume
	if err := x.Unmarshal(doc); err != nil {
		return Volume{}, fmt.Errorf("parse volume %s/%s: %w", v.Pool, v.Name, err)
	}
	out := Volume{Name: v.Name, Path: v.Key}
	if x.Target != nil {
		if x.Target.Path != "" {
			out.Path = x.Target.Path
		}
		if x.Target.Format != nil {
			out.Format = x.Target.Format.Type
		}
	}
	if x.Capacity != nil {
		out.CapacityBytes = int64(scaleBytes(x.Capacity))
	}
	if x.Allocation != nil {
		out.AllocationBytes = int64(scaleBytes(x.Allocation))
	}
	if b := x.BackingStore; b != nil && b.Path != "" {
		out.Backing = &Backing{Path: b.Path}
		if b.Format != nil {
			out.Backing.Format = b.Format.Type
		}
	}
	return out, nil
}

// scaleBytes returns a libvirt size in bytes (libvirt writes "bytes" in what it returns;
// other units are read for safety).
func scaleBytes(s *libvirtxml.StorageVolumeSize) uint64 {
	switch strings.ToLower(s.Unit) {
	case "", "b", "bytes":
		return s.Value
	case "k", "kib":
		return s.Value << 10
	case "m", "mib":
		return s.Value << 20
	case "g", "gib":
		return s.Value << 30
	case "kb":
		return s.Value * 1000
	case "mb":
		return s.Value * 1000 * 1000
	case "gb":
		return s.Value * 1000 * 1000 * 1000
	}
	return s.Value
}

// UploadVolume writes r into the volume; see [Storage.UploadVolume].
func (h *Libvirt) UploadVolume(ctx context.Context, pool, name string, r io.Reader, length int64) error {
	c, err := h.client(ctx)
	if err != nil {
		return err
	}
	// Not through do: r cannot be read twice, so a lost connection is the caller's to retry.
	v, err := lookupVolume(c, pool, name)
	if err != nil {
		return err
	}
	err = c.StorageVolUpload(v, r, 0, uint64(length), 0)
	if isCode(err, libvirt.ErrNoSupport) && h.domainType == DomainTypeTest {
		// libvirt's test driver keeps volumes in memory without their bytes and cannot
		// upload: read r to its end, as the Simulated hypervisor does, so that the agent's
		// path is the same on it.
		n, cerr := io.Copy(io.Discard, io.LimitReader(r, length))
		if cerr == nil && n != length {
			cerr = fmt.Errorf("%d of %d bytes", n, length)
		}
		if cerr != nil {
			return fmt.Errorf("upload volume %s/%s: %w", pool, name, cerr)
		}
		return nil
	}
	if err != nil {
		if connectionLost(c, err) {
			h.drop(c)
		}
		return fmt.Errorf("upload volume %s/%s: %w", pool, name, err)
	}
	return nil
}

// Volume returns a volume; see [Storage.Volume].
func (h *Libvirt) Volume(ctx context.Context, pool, name string) (Volume, error) {
	var out Volume
	err := h.do(ctx, func(c *libvirt.Libvirt) error {
		v, err := lookupVolume(c, pool, name)
		if err != nil {
			return err
		}
		out, err = describeVolume(c, v)
		return err
	})
	return out, err
}

// ListVolumes returns the volumes of a pool; see [Storage.ListVolumes].
func (h *Libvirt) ListVolumes(ctx context.Context, pool string) ([]Volume, error) {
	var out []Volume
	err := h.do(ctx, func(c *libvirt.Libvirt) error {
		out = out[:0]
		p, err := lookupPool(c, pool)
		if err != nil {
			return err
		}
		vols, _, err := c.StoragePoolListAllVolumes(p, 1, 0)
		if err != nil {
			return fmt.Errorf("list volumes of %s: %w", pool, err)
		}
		for _, v := range vols {
			d, err := describeVolume(c, v)
			if isNotFound(err) {
				continue // deleted meanwhile
			}
			if err != nil {
				return err
			}
			out = append(out, d)
		}
		return nil
	})
	slices.SortFunc(out, func(a, b Volume) int { return strings.Compare(a.Name, b.Name) })
	return out, err
}

// DeleteVolume deletes a volume and its data; see [Storage.DeleteVolume].
func (h *Libvirt) DeleteVolume(ctx context.Context, pool, name string) error {
	err := h.do(ctx, func(c *libvirt.Libvirt) error {
		v, err := lookupVolume(c, pool, name)
		if err != nil {
			return err
		}
		if err := c.StorageVolDelete(v, 0); err != nil && !isCode(err, libvirt.ErrNoStorageVol) {
			return fmt.Errorf("delete volume %s/%s: %w", pool, name, err)
		}
		return nil
	})
	if isNotFound(err) {
		return nil // the volume, or its whole pool, is gone already
	}
	return err
}

// GrowVolume grows a volume; see [Storage.GrowVolume]. libvirt resizes a file volume of a
// directory pool with qemu-img (qcow2) or by extending the file (raw).
func (h *Libvirt) GrowVolume(ctx context.Context, pool, name string, capacityBytes int64) (Volume, error) {
	var out Volume
	err := h.do(ctx, func(c *libvirt.Libvirt) error {
		v, err := lookupVolume(c, pool, name)
		if err != nil {
			return err
		}
		cur, err := describeVolume(c, v)
		if err != nil {
			return err
		}
		if cur.CapacityBytes >= capacityBytes {
			out = cur
			return nil
		}
		err = c.StorageVolResize(v, uint64(capacityBytes), 0)
		if isCode(err, libvirt.ErrNoSupport) && h.domainType == DomainTypeTest {
			// libvirt's test driver keeps volumes in memory without their bytes and cannot
			// resize: the volume is made again at the new size, same format and backing,
			// which on it is the same thing, so that the agent's path is the same there.
			return h.recreateVolume(c, pool, cur, capacityBytes, &out)
		}
		if err != nil {
			return fmt.Errorf("grow volume %s/%s to %d bytes: %w", pool, name, capacityBytes, unsupported(err))
		}
		out, err = describeVolume(c, v)
		return err
	})
	return out, err
}

// recreateVolume replaces the test driver's volume cur with one of capacityBytes (see
// GrowVolume) and describes it into out.
func (h *Libvirt) recreateVolume(c *libvirt.Libvirt, pool string, cur Volume, capacityBytes int64, out *Volume) error {
	v, err := lookupVolume(c, pool, cur.Name)
	if err != nil {
		return err
	}
	if err := c.StorageVolDelete(v, 0); err != nil {
		return fmt.Errorf("grow volume %s/%s: %w", pool, cur.Name, err)
	}
	x := &libvirtxml.StorageVolume{Name: cur.Name,
		Capacity: &libvirtxml.StorageVolumeSize{Unit: "bytes", Value: uint64(capacityBytes)},
		Target:   &libvirtxml.StorageVolumeTarget{Format: &libvirtxml.StorageVolumeTargetFormat{Type: cur.Format}}}
	if b := cur.Backing; b != nil {
		x.BackingStore = &libvirtxml.StorageVolumeBackingStore{Path: b.Path, Format: &libvirtxml.StorageVolumeTargetFormat{Type: b.Format}}
	}
	doc, err := x.Marshal()
	if err != nil {
		return err
	}
	p, err := lookupPool(c, pool)
	if err != nil {
		return err
	}
	if v, err = c.StorageVolCreateXML(p, doc, 0); err != nil {
		return fmt.Errorf("grow volume %s/%s: %w", pool, cur.Name, err)
	}
	*out, err = describeVolume(c, v)
	return err
}

// isNotFound reports whether err is a *NotFoundError.
func isNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// DeletePool stops and removes a pool's definition, deleting its volumes first (for tests
// and for decommissioning a node). A missing pool is not an error.
func (h *Libvirt) DeletePool(ctx context.Context, name string) error {
	err := h.do(ctx, func(c *libvirt.Libvirt) error {
		p, err := lookupPool(c, name)
		if err != nil {
			return err
		}
		if vols, _, err := c.StoragePoolListAllVolumes(p, 1, 0); err == nil {
			for _, v := range vols {
				if err := c.StorageVolDelete(v, 0); err != nil && !isCode(err, libvirt.ErrNoStorageVol) {
					return fmt.Errorf("delete volume %s/%s: %w", name, v.Name, err)
				}
			}
		}
		if err := c.StoragePoolDestroy(p); err != nil && !isCode(err, libvirt.ErrOperationInvalid) {
			return fmt.Errorf("stop pool %s: %w", name, err)
		}
		if err := c.StoragePoolUndefine(p); err != nil && !isCode(err, libvirt.ErrNoStoragePool) {
			return fmt.Errorf("undefine pool %s: %w", name, err)
		}
		return nil
	})
	if isNotFound(err) {
		return nil
	}
	return err
}

// CopyVolume copies a volume; see [Storage.CopyVolume]. libvirt's StorageVolCreateXMLFrom
// copies a directory pool's file volume with `qemu-img convert` (which reads through the
// backing chain); the test driver copies its in-memory record (between two pools, it makes
// a volume of the same size: it cannot copy across pools and keeps no bytes anyway).
func (h *Libvirt) CopyVolume(ctx context.Context, srcPool, src, dstPool, dst string) (Volume, error) {
	if _, err := (VolumeSpec{Name: dst, CapacityBytes: 1}).normalize(); err != nil {
		return Volume{}, err
	}
	var out Volume
	err := h.do(ctx, func(c *libvirt.Libvirt) error {
		sv, err := lookupVolume(c, srcPool, src)
		if err != nil {
			return err
		}
		cur, err := describeVolume(c, sv)
		if err != nil {
			return err
		}
		p, err := lookupPool(c, dstPool)
		if err != nil {
			return err
		}
		if old, err := c.StorageVolLookupByName(p, dst); err == nil {
			if err := c.StorageVolDelete(old, 0); err != nil && !isCode(err, libvirt.ErrNoStorageVol) {
				return fmt.Errorf("replace volume %s/%s: %w", dstPool, dst, err)
			}
		} else if !isCode(err, libvirt.ErrNoStorageVol) {
			return fmt.Errorf("look up volume %s/%s: %w", dstPool, dst, err)
		}
		x := &libvirtxml.StorageVolume{Name: dst,
			Capacity: &libvirtxml.StorageVolumeSize{Unit: "bytes", Value: uint64(cur.CapacityBytes)},
			Target:   &libvirtxml.StorageVolumeTarget{Format: &libvirtxml.StorageVolumeTargetFormat{Type: "qcow2"}}}
		doc, err := x.Marshal()
		if err != nil {
			return err
		}
		var v libvirt.StorageVol
		if h.domainType == DomainTypeTest && srcPool != dstPool {
			// libvirt's test driver looks the source up in the destination pool and cannot
			// copy between pools; it keeps no bytes, so a volume of the same size is the
			// same thing there, and the agent's path stays the same.
			v, err = c.StorageVolCreateXML(p, doc, 0)
		} else {
			v, err = c.StorageVolCreateXMLFrom(p, doc, sv, 0)
			if err != nil && strings.Contains(err.Error(), sharedLockRefused) {
				v, err = copyInUse(ctx, c, p, cur, dst)
			}
		}
		if err != nil {
			return fmt.Errorf("copy volume %s/%s to %s/%s: %w", srcPool, src, dstPool, dst, err)
		}
		out, err = describeVolume(c, v)
		return err
	})
	return out, err
}

// sharedLockRefused is what qemu-img says when a running (or paused) domain's QEMU holds
// the image it is to read: libvirt's copy (qemu-img convert) cannot share the lock.
const sharedLockRefused = `Failed to get shared "write" lock`

// copyInUse copies volume src, which a domain's QEMU holds open, into a new qcow2 volume
// dst of pool p the way libvirt would, but with qemu-img convert's --force-share (-U): the
// caller paused the domain (QEMU flushes its disks when it stops the vCPUs), so what is read
// is consistent. The agent runs beside libvirtd (its unix socket) and reads the pools'
// files itself; the pool is refreshed so that libvirt knows the new volume.
func copyInUse(ctx context.Context, c *libvirt.Libvirt, p libvirt.StoragePool, src Volume, dst string) (libvirt.StorageVol, error) {
	desc, err := c.StoragePoolGetXMLDesc(p, 0)
	if err != nil {
		return libvirt.StorageVol{}, err
	}
	var px libvirtxml.StoragePool
	if err := px.Unmarshal(desc); err != nil {
		return libvirt.StorageVol{}, err
	}
	if px.Target == nil || px.Target.Path == "" {
		return libvirt.StorageVol{}, fmt.Errorf("pool %s has no directory", p.Name)
	}
	format := src.Format
	if format == "" {
		format = "qcow2"
	}
	path := filepath.Join(px.Target.Path, dst)
	out, err := exec.CommandContext(ctx, "qemu-img", "convert", "-U", "-f", format, "-O", "qcow2", src.Path, path).CombinedOutput()
	if err != nil {
		_ = os.Remove(path)
		return libvirt.StorageVol{}, fmt.Errorf("qemu-img convert -U %s: %v: %s", src.Path, err, strings.TrimSpace(string(out)))
	}
	if err := c.StoragePoolRefresh(p, 0); err != nil {
		return libvirt.StorageVol{}, fmt.Errorf("refresh pool %s: %w", p.Name, err)
	}
	return c.StorageVolLookupByName(p, dst)
}
