package hypervisor

import (
	"context"
	"io"
	"path/filepath"
	"regexp"
	"strings"
)

// Storage is the part of a [Hypervisor] that keeps a node's disks: one storage pool (a
// directory) holding the cached images, the VMs' root disks (copy-on-write overlays of a
// cached image) and their volumes. Every operation is idempotent like the domain ones, and
// a volume or pool that does not exist is a [*NotFoundError] (DeleteVolume excepted).
type Storage interface {
	// EnsurePool makes the directory pool of spec exist and run (defined, built, started
	// and set to autostart as needed). A pool of that name that exists already is kept as
	// it is, only started if it is not running.
	EnsurePool(ctx context.Context, spec PoolSpec) error

	// CreateVolume creates a volume in pool, or returns the one of that name that exists
	// already (unchanged, whatever spec says: volumes are named for what they hold). A
	// volume with Backing is a qcow2 overlay: reads of blocks it has not written come from
	// the backing file, which must not change while the overlay exists.
	CreateVolume(ctx context.Context, pool string, spec VolumeSpec) (Volume, error)

	// UploadVolume writes length bytes of r into the volume from its start.
	UploadVolume(ctx context.Context, pool, name string, r io.Reader, length int64) error

	// Volume returns the volume name of pool.
	Volume(ctx context.Context, pool, name string) (Volume, error)

	// ListVolumes returns the volumes of pool sorted by name.
	ListVolumes(ctx context.Context, pool string) ([]Volume, error)

	// DeleteVolume deletes the volume and its data. A missing volume is not an error.
	DeleteVolume(ctx context.Context, pool, name string) error
	// GrowVolume makes the volume at least capacityBytes large as the guest sees it (a
	// qcow2 overlay grows like `qemu-img resize`) and returns it. A volume as large or
	// larger is left as it is: volumes never shrink.
	GrowVolume(ctx context.Context, pool, name string, capacityBytes int64) (Volume, error)
	// PoolInfo returns the size of pool: what the node can give its VMs' disks.
	PoolInfo(ctx context.Context, pool string) (PoolInfo, error)
	// CopyVolume makes volume dst of pool dstPool a full copy of volume src of pool srcPool
	// (the pools may be the same): a standalone qcow2 volume of src's size holding what a
	// guest reads from src, its backing chain included (libvirt copies with `qemu-img
	// convert`). A dst that exists already is replaced, so that a copy cut short by a crash
	// is simply made again. src must not be written meanwhile: pause its domain first.
	// Snapshots, backups and restores are such copies.
	CopyVolume(ctx context.Context, srcPool, src, dstPool, dst string) (Volume, error)
}

// PoolInfo is the size of a storage pool, in bytes: the filesystem of a directory pool.
type PoolInfo struct {
	CapacityBytes, AllocationBytes, AvailableBytes int64
}

// PoolSpec describes a directory storage pool.
type PoolSpec struct {
	// Name of the pool (required).
	Name string
	// Path of the pool's directory on the host (absolute, required).
	Path string
}

// VolumeSpec describes a volume to create.
type VolumeSpec struct {
	// Name of the volume within its pool (required; letters, digits, '.', '_', '-').
	Name string
	// Format is "qcow2" (the default) or "raw".
	Format string
	// CapacityBytes is the size the guest sees (positive).
	CapacityBytes int64
	// Backing, when set, makes a qcow2 overlay of the file it names.
	Backing *Backing
}

// Backing is the file under a copy-on-write overlay.
type Backing struct {
	// Path of the backing file (absolute).
	Path string
	// Format of the backing file: "qcow2" or "raw".
	Format string
}

// Volume is a volume as the hypervisor holds it.
type Volume struct {
	Name string
	// Path of the volume's file on the host: what a domain's disk points at.
	Path string
	// Format is "qcow2" or "raw" (as created).
	Format string
	// CapacityBytes is the size the guest sees; AllocationBytes what it takes on the host.
	CapacityBytes   int64
	AllocationBytes int64
	// Backing is the overlay's backing file, nil for a volume without one.
	Backing *Backing
}

// volumeNameRE bounds volume names: they become file names in the pool's directory.
var volumeNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)

// validate checks a pool spec; errors match ErrInvalidSpec.
func (p PoolSpec) validate() error {
	if !nameRE.MatchString(p.Name) {
		return invalidSpec("pool name %q", p.Name)
	}
	if p.Path == "" || !filepath.IsAbs(p.Path) || strings.ContainsAny(p.Path, "\x00\n") {
		return invalidSpec("pool %s: path %q must be absolute", p.Name, p.Path)
	}
	return nil
}

// normalize validates a volume spec and fills in its defaults; errors match ErrInvalidSpec.
func (v VolumeSpec) normalize() (VolumeSpec, error) {
	if !volumeNameRE.MatchString(v.Name) || strings.Contains(v.Name, "..") {
		return v, invalidSpec("volume name %q", v.Name)
	}
	if v.Format == "" {
		v.Format = "qcow2"
	}
	if v.Format != "qcow2" && v.Format != "raw" {
		return v, invalidSpec("volume %s: format %q: want qcow2 or raw", v.Name, v.Format)
	}
	if v.CapacityBytes <= 0 {
		return v, invalidSpec("volume %s: capacity %d: must be positive", v.Name, v.CapacityBytes)
	}
	if v.Backing != nil {
		b := *v.Backing
		if v.Format != "qcow2" {
			return v, invalidSpec("volume %s: an overlay must be qcow2", v.Name)
		}
		if b.Path == "" || !filepath.IsAbs(b.Path) || strings.ContainsAny(b.Path, "\x00\n") {
			return v, invalidSpec("volume %s: backing path %q must be absolute", v.Name, b.Path)
		}
		if b.Format == "" {
			b.Format = "qcow2"
		}
		if b.Format != "qcow2" && b.Format != "raw" {
			return v, invalidSpec("volume %s: backing format %q: want qcow2 or raw", v.Name, b.Format)
		}
		v.Backing = &b
	}
	return v, nil
}

// volumeNotFound is the error of a missing volume.
func volumeNotFound(pool, name string) error {
	return &NotFoundError{Kind: "volume", Name: pool + "/" + name}
}

// poolNotFound is the error of a missing pool.
func poolNotFound(pool string) error { return &NotFoundError{Kind: "pool", Name: pool} }
