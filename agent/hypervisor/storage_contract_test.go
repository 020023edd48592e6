package hypervisor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// poolDeleter removes a pool: both implementations have it, for tests and decommissioning.
type poolDeleter interface {
	DeletePool(ctx context.Context, name string) error
}

// testPool makes a fresh pool under dir on h and removes it when the test ends.
func testPool(t *testing.T, h Hypervisor, dir string) PoolSpec {
	t.Helper()
	spec := PoolSpec{Name: fmt.Sprintf("vf-test-%d", newVMID()), Path: dir}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := h.(poolDeleter).DeletePool(ctx, spec.Name); err != nil && !errors.Is(err, ErrClosed) {
			t.Errorf("cleanup: DeletePool(%s): %v", spec.Name, err)
		}
	})
	return spec
}

// runStorageContract checks the behaviour every Storage promises. open returns a
// hypervisor that is closed when the test ends; domainXML, when not nil, reads a domain's
// XML back (to see the overlay's backing store in it), or "" where there is none.
func runStorageContract(t *testing.T, open func(t *testing.T) Hypervisor, domainXML func(h Hypervisor, name string) (string, error)) {
	t.Run("ImageOverlayLifecycle", func(t *testing.T) {
		h := open(t)
		ctx := testCtx(t)
		pool := testPool(t, h, t.TempDir()+"/pool")
		must(t, "EnsurePool", h.EnsurePool(ctx, pool))
		must(t, "EnsurePool again", h.EnsurePool(ctx, pool))

		const size = 1 << 20
		data := bytes.Repeat([]byte("virtflow"), size/8)
		base, err := h.CreateVolume(ctx, pool.Name, VolumeSpec{Name: "image-1-abc", Format: "raw", CapacityBytes: size})
		must(t, "CreateVolume base", err)
		if base.Path == "" || base.Format != "raw" || base.CapacityBytes != size {
			t.Fatalf("base volume %+v", base)
		}
		must(t, "UploadVolume", h.UploadVolume(ctx, pool.Name, base.Name, bytes.NewReader(data), size))
		again, err := h.CreateVolume(ctx, pool.Name, VolumeSpec{Name: "image-1-abc", Format: "raw", CapacityBytes: 2 * size})
		must(t, "CreateVolume base again", err)
		if again.Path != base.Path || again.CapacityBytes != size {
			t.Fatalf("CreateVolume of an existing name changed it: %+v, was %+v", again, base)
		}

		overlay, err := h.CreateVolume(ctx, pool.Name, VolumeSpec{Name: "vf-1-root", CapacityBytes: 4 * size,
			Backing: &Backing{Path: base.Path, Format: "raw"}})
		must(t, "CreateVolume overlay", err)
		if overlay.Format != "qcow2" || overlay.CapacityBytes != 4*size || overlay.Backing == nil || overlay.Backing.Path != base.Path {
			t.Fatalf("overlay volume %+v (backing %+v), want qcow2 of %d over %s", overlay, overlay.Backing, 4*size, base.Path)
		}
		vols, err := h.ListVolumes(ctx, pool.Name)
		must(t, "ListVolumes", err)
		if len(vols) != 2 || vols[0].Name != "image-1-abc" || vols[1].Name != "vf-1-root" {
			t.Fatalf("ListVolumes = %+v, want the image and the overlay", vols)
		}

		// A domain on the overlay names its backing file.
		spec := smallSpec()
		spec.Disks = []Disk{{Path: overlay.Path, Backing: &Backing{Path: base.Path, Format: "raw"}}}
		cleanupDomain(t, h, spec.Name())
		must(t, "Define with an overlay disk", h.Define(ctx, spec))
		if x, err := domainXML(h, spec.Name()); err != nil || x != "" {
			must(t, "DomainXML", err)
			if !strings.Contains(x, overlay.Path) || !strings.Contains(x, "<backingStore") || !strings.Contains(x, base.Path) {
				t.Fatalf("domain XML lacks the overlay %s backed by %s:\n%s", overlay.Path, base.Path, x)
			}
		}
		must(t, "Undefine", h.Undefine(ctx, spec.Name()))

		for range 2 {
			must(t, "DeleteVolume overlay", h.DeleteVolume(ctx, pool.Name, overlay.Name))
		}
		if _, err := h.Volume(ctx, pool.Name, overlay.Name); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Volume after DeleteVolume: err = %v, want ErrNotFound", err)
		}
		must(t, "DeleteVolume base", h.DeleteVolume(ctx, pool.Name, base.Name))
		vols, err = h.ListVolumes(ctx, pool.Name)
		must(t, "ListVolumes", err)
		if len(vols) != 0 {
			t.Fatalf("volumes left in the pool: %+v", vols)
		}
	})

	t.Run("GrowOverlay", func(t *testing.T) {
		// A resized VM's root disk grows (issue 24); it never shrinks.
		h := open(t)
		ctx := testCtx(t)
		pool := testPool(t, h, t.TempDir()+"/pool")
		must(t, "EnsurePool", h.EnsurePool(ctx, pool))
		const size = 1 << 20
		base, err := h.CreateVolume(ctx, pool.Name, VolumeSpec{Name: "image-2-abc", Format: "raw", CapacityBytes: size})
		must(t, "CreateVolume base", err)
		overlay, err := h.CreateVolume(ctx, pool.Name, VolumeSpec{Name: "vf-2-root", CapacityBytes: 2 * size,
			Backing: &Backing{Path: base.Path, Format: "raw"}})
		must(t, "CreateVolume overlay", err)
		grown, err := h.GrowVolume(ctx, pool.Name, overlay.Name, 8*size)
		must(t, "GrowVolume", err)
		if grown.CapacityBytes != 8*size || grown.Format != "qcow2" || grown.Path != overlay.Path {
			t.Fatalf("grown overlay %+v, want qcow2 of %d at %s", grown, 8*size, overlay.Path)
		}
		if got, err := h.Volume(ctx, pool.Name, overlay.Name); err != nil || got.CapacityBytes != 8*size || got.Backing == nil {
			t.Fatalf("Volume after GrowVolume = %+v, %v; want %d bytes, still backed by the image", got, err, 8*size)
		}
		if vs, ok := qemuImgVirtualSize(t, overlay.Path); ok && vs != 8*size {
			t.Errorf("qemu-img info: virtual size %d, want %d", vs, 8*size)
		}
		same, err := h.GrowVolume(ctx, pool.Name, overlay.Name, 4*size)
		must(t, "GrowVolume smaller", err)
		if same.CapacityBytes != 8*size {
			t.Errorf("GrowVolume to a smaller size shrank the volume to %d", same.CapacityBytes)
		}
		if _, err := h.GrowVolume(ctx, pool.Name, "nothing", size); !errors.Is(err, ErrNotFound) {
			t.Errorf("GrowVolume of a missing volume: err = %v, want ErrNotFound", err)
		}
	})

	t.Run("CopyVolume", func(t *testing.T) {
		// Snapshots, backups and restores (issue 29): a full, standalone copy of an overlay,
		// into the same pool or another (the backup target), replacing what is there.
		h := open(t)
		ctx := testCtx(t)
		pool := testPool(t, h, t.TempDir()+"/pool")
		target := testPool(t, h, t.TempDir()+"/backups")
		must(t, "EnsurePool", h.EnsurePool(ctx, pool))
		must(t, "EnsurePool target", h.EnsurePool(ctx, target))
		const size = 1 << 20
		data := bytes.Repeat([]byte("snapshot"), size/8)
		base, err := h.CreateVolume(ctx, pool.Name, VolumeSpec{Name: "image-3-abc", Format: "raw", CapacityBytes: size})
		must(t, "CreateVolume base", err)
		must(t, "UploadVolume", h.UploadVolume(ctx, pool.Name, base.Name, bytes.NewReader(data), size))
		overlay, err := h.CreateVolume(ctx, pool.Name, VolumeSpec{Name: "vf-3-root", CapacityBytes: 2 * size,
			Backing: &Backing{Path: base.Path, Format: "raw"}})
		must(t, "CreateVolume overlay", err)

		snap, err := h.CopyVolume(ctx, pool.Name, overlay.Name, pool.Name, "vf-snap-3")
		must(t, "CopyVolume snapshot", err)
		if snap.Format != "qcow2" || snap.CapacityBytes != 2*size || snap.Backing != nil || snap.Path == overlay.Path {
			t.Fatalf("snapshot %+v; want a standalone qcow2 of %d bytes", snap, 2*size)
		}
		backup, err := h.CopyVolume(ctx, pool.Name, overlay.Name, target.Name, "vf-backup-3")
		must(t, "CopyVolume backup", err)
		if !strings.HasPrefix(backup.Path, target.Path) || backup.CapacityBytes != 2*size {
			t.Fatalf("backup %+v; want %d bytes under %s", backup, 2*size, target.Path)
		}
		// Copied again (an interrupted copy made again): replaced, not refused.
		if _, err := h.CopyVolume(ctx, pool.Name, overlay.Name, target.Name, "vf-backup-3"); err != nil {
			t.Fatalf("CopyVolume over an existing copy: %v", err)
		}
		if qemuImg, err := exec.LookPath("qemu-img"); err == nil {
			if _, err := os.Stat(backup.Path); err == nil {
				// The copy reads like the overlay: the image's bytes came through the backing chain.
				if out, err := exec.Command(qemuImg, "compare", "-U", overlay.Path, backup.Path).CombinedOutput(); err != nil {
					t.Fatalf("qemu-img compare overlay backup: %v: %s", err, out)
				}
			}
		}
		// Restore: the backup copied back as a VM's root disk.
		restored, err := h.CopyVolume(ctx, target.Name, "vf-backup-3", pool.Name, "vf-4-root")
		must(t, "CopyVolume restore", err)
		if restored.CapacityBytes != 2*size || restored.Backing != nil {
			t.Fatalf("restored %+v", restored)
		}
		if _, err := h.CopyVolume(ctx, pool.Name, "nothing", pool.Name, "x"); !errors.Is(err, ErrNotFound) {
			t.Errorf("CopyVolume of a missing volume: err = %v, want ErrNotFound", err)
		}
		if _, err := h.CopyVolume(ctx, pool.Name, overlay.Name, pool.Name, "../escape"); !errors.Is(err, ErrInvalidSpec) {
			t.Errorf("CopyVolume to a bad name: err = %v, want ErrInvalidSpec", err)
		}
		for _, v := range []string{"vf-4-root", "vf-snap-3", overlay.Name, base.Name} {
			must(t, "DeleteVolume", h.DeleteVolume(ctx, pool.Name, v))
		}
		must(t, "DeleteVolume backup", h.DeleteVolume(ctx, target.Name, "vf-backup-3"))
	})

	t.Run("Errors", func(t *testing.T) {
		h := open(t)
		ctx := testCtx(t)
		if _, err := h.Volume(ctx, fmt.Sprintf("vf-missing-%d", newVMID()), "x"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Volume in a missing pool: err = %v, want ErrNotFound", err)
		}
		if _, err := h.PoolInfo(ctx, fmt.Sprintf("vf-missing-%d", newVMID())); !errors.Is(err, ErrNotFound) {
			t.Errorf("PoolInfo of a missing pool: err = %v, want ErrNotFound", err)
		}
		pool := testPool(t, h, t.TempDir()+"/pool")
		must(t, "EnsurePool", h.EnsurePool(ctx, pool))
		// The node reports this as its disk capacity.
		if info, err := h.PoolInfo(ctx, pool.Name); err != nil || info.CapacityBytes <= 0 || info.AvailableBytes > info.CapacityBytes {
			t.Errorf("PoolInfo = %+v, %v; want a positive capacity", info, err)
		}
		for _, bad := range []VolumeSpec{
			{Name: "../escape", CapacityBytes: 1},
			{Name: "ok", CapacityBytes: 0},
			{Name: "ok", Format: "vmdk", CapacityBytes: 1},
			{Name: "ok", Format: "raw", CapacityBytes: 1, Backing: &Backing{Path: "/x"}},
			{Name: "ok", CapacityBytes: 1, Backing: &Backing{Path: "relative"}},
		} {
			if _, err := h.CreateVolume(ctx, pool.Name, bad); !errors.Is(err, ErrInvalidSpec) {
				t.Errorf("CreateVolume(%+v): err = %v, want ErrInvalidSpec", bad, err)
			}
		}
		if _, err := h.Volume(ctx, pool.Name, "nothing"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Volume of a missing volume: err = %v, want ErrNotFound", err)
		}
		must(t, "DeleteVolume of a missing volume", h.DeleteVolume(ctx, pool.Name, "nothing"))
		if err := h.EnsurePool(ctx, PoolSpec{Name: "p", Path: "relative"}); !errors.Is(err, ErrInvalidSpec) {
			t.Errorf("EnsurePool with a relative path: err = %v, want ErrInvalidSpec", err)
		}
	})
}

// qemuImgVirtualSize reads a disk file's virtual size with the real qemu-img; ok is false
// where there is no such file (a simulated pool) or no qemu-img.
func qemuImgVirtualSize(t *testing.T, path string) (int64, bool) {
	t.Helper()
	bin, err := exec.LookPath("qemu-img")
	if err != nil {
		return 0, false
	}
	if _, err := os.Stat(path); err != nil {
		return 0, false
	}
	out, err := exec.Command(bin, "info", "-U", "--output=json", path).Output()
	if err != nil {
		t.Fatalf("qemu-img info %s: %v", path, err)
	}
	var info struct {
		VirtualSize int64 `json:"virtual-size"`
	}
	if err := json.Unmarshal(out, &info); err != nil {
		t.Fatalf("qemu-img info: %v: %s", err, out)
	}
	return info.VirtualSize, true
}

// TestLibvirtQEMUStorage runs the storage contract against qemu:///system: a real directory
// pool under a temporary directory, volumes made by libvirt (qemu-img for the overlay).
func TestLibvirtQEMUStorage(t *testing.T) {
	socket := libvirtSocket(t)
	open := func(t *testing.T) Hypervisor {
		h, err := NewLibvirt(testCtx(t), LibvirtConfig{Socket: socket, URI: "qemu:///system", DomainType: DomainTypeQEMU})
		if err != nil {
			t.Fatalf("NewLibvirt(qemu:///system): %v", err)
		}
		t.Cleanup(func() { _ = h.Close() })
		return h
	}
	runStorageContract(t, open, func(h Hypervisor, name string) (string, error) {
		return h.(*Libvirt).DomainXML(testCtx(t), name)
	})
}
