package nodeagent

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/virtflow/virtflow/agent/hypervisor"
)

// Defaults of the node's image cache and disks.
const (
	// DefaultPool is the libvirt storage pool of the node's images, root disks and volumes.
	DefaultPool = "virtflow"
	// DefaultPoolPath is the directory of DefaultPool when the agent creates it.
	DefaultPoolPath = "/var/lib/virtflow/pool"
)

// imageCache keeps one copy of each image per node in the storage pool: it downloads an
// image from the API once (resuming an interrupted transfer with Range requests), checks
// its sha256, uploads it into a volume named for the image and its checksum, and hands out
// that volume to every later VM of the image. Staging files and the record of complete
// volumes live in the agent's cache directory.
type imageCache struct {
	hv    hypervisor.Hypervisor
	pool  hypervisor.PoolSpec
	dir   string // staging downloads and completion markers
	http  *http.Client
	base  string // the API's base URL, without /query
	token string

	poolOnce sync.Mutex
	poolOK   bool

	mu    sync.Mutex
	locks map[string]*sync.Mutex // per image volume: one download at a time
}

// cachedImage is an image's volume in the pool.
type cachedImage struct {
	Volume      hypervisor.Volume
	Format      string // qcow2 or raw
	VirtualSize int64  // the size the guest sees
}

// newImageCache returns the cache of an agent's config.
func newImageCache(cfg Config) (*imageCache, error) {
	dir := cfg.CacheDir
	if dir == "" {
		d, err := os.MkdirTemp("", "virtflow-agent-cache-")
		if err != nil {
			return nil, fmt.Errorf("nodeagent: cache directory: %w", err)
		}
		dir = d
	} else if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("nodeagent: cache directory: %w", err)
	}
	pool := hypervisor.PoolSpec{Name: cfg.Pool, Path: cfg.PoolPath}
	if pool.Name == "" {
		pool.Name = DefaultPool
	}
	if pool.Path == "" {
		pool.Path = DefaultPoolPath
	}
	client := *cfg.HTTPClient
	client.Timeout = 0 // an image transfer takes as long as it takes; ctx bounds it
	return &imageCache{
		hv: cfg.Hypervisor, pool: pool, dir: dir, http: &client,
		base: strings.TrimSuffix(strings.TrimSuffix(cfg.APIURL, "/"), "/query"), token: cfg.Token,
		locks: map[string]*sync.Mutex{},
	}, nil
}

// ensurePool makes the pool exist once per agent run.
func (c *imageCache) ensurePool(ctx context.Context) error {
	c.poolOnce.Lock()
	defer c.poolOnce.Unlock()
	if c.poolOK {
		return nil
	}
	if err := c.hv.EnsurePool(ctx, c.pool); err != nil {
		return fmt.Errorf("storage pool %s: %w", c.pool.Name, err)
	}
	c.poolOK = true
	return nil
}

// lock serializes the work on one image volume; call the returned unlock.
func (c *imageCache) lock(name string) func() {
	c.mu.Lock()
	l, ok := c.locks[name]
	if !ok {
		l = &sync.Mutex{}
		c.locks[name] = l
	}
	c.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// imageVolumeName is the pool volume of an image: named for its id and checksum, so that
// other bytes under the same id never reuse a stale copy.
func imageVolumeName(img *Image) (string, string, error) {
	if img.Checksum == nil {
		return "", "", fmt.Errorf("image %s has no checksum", img.Id)
	}
	sum, ok := strings.CutPrefix(*img.Checksum, "sha256:")
	if b, err := hex.DecodeString(sum); !ok || err != nil || len(b) != sha256.Size {
		return "", "", fmt.Errorf("image %s: checksum %q: want sha256:<hex>", img.Id, *img.Checksum)
	}
	return "image-" + img.Id + "-" + sum[:16], strings.ToLower(sum), nil
}

// ensure returns the pool volume of img, downloading and uploading it first when the
// node does not have it yet. hit says whether the cached copy was reused.
func (c *imageCache) ensure(ctx context.Context, img *Image) (ci cachedImage, hit bool, err error) {
	switch img.Status {
	case ImageStatusActive, ImageStatusDeprecated:
	default:
		return ci, false, fmt.Errorf("image %s is %s: its bytes are not on the server (yet)", img.Id, img.Status)
	}
	name, sum, err := imageVolumeName(img)
	if err != nil {
		return ci, false, err
	}
	if err := c.ensurePool(ctx); err != nil {
		return ci, false, err
	}
	unlock := c.lock(name)
	defer unlock()
	format := "raw"
	if img.Format == ImageFormatQcow2 {
		format = "qcow2"
	}
	marker := filepath.Join(c.dir, name+".ok")
	vol, verr := c.hv.Volume(ctx, c.pool.Name, name)
	if verr == nil {
		if b, err := os.ReadFile(marker); err == nil {
			if vs, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && vs > 0 {
				return cachedImage{Volume: vol, Format: format, VirtualSize: vs}, true, nil
			}
		}
		// A volume without its completion record: an upload that did not finish.
		if err := c.hv.DeleteVolume(ctx, c.pool.Name, name); err != nil {
			return ci, false, fmt.Errorf("remove incomplete image volume %s: %w", name, err)
		}
	} else if !errors.Is(verr, hypervisor.ErrNotFound) {
		return ci, false, verr
	}

	staged := filepath.Join(c.dir, name+".download")
	if err := c.download(ctx, img, staged, sum); err != nil {
		return ci, false, err
	}
	f, err := os.Open(staged)
	if err != nil {
		return ci, false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ci, false, err
	}
	vsize := st.Size()
	if format == "qcow2" {
		if vsize, err = qcow2VirtualSize(f); err != nil {
			return ci, false, fmt.Errorf("image %s: %w", img.Id, err)
		}
	}
	vol, err = c.hv.CreateVolume(ctx, c.pool.Name, hypervisor.VolumeSpec{Name: name, Format: "raw", CapacityBytes: st.Size()})
	if err != nil {
		return ci, false, fmt.Errorf("image volume %s: %w", name, err)
	}
	// The cache volume holds the image file as it is (a qcow2 file in a raw volume's
	// bytes); it is created raw so that libvirt writes nothing of its own into it.
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return ci, false, err
	}
	if err := c.hv.UploadVolume(ctx, c.pool.Name, name, f, st.Size()); err != nil {
		return ci, false, fmt.Errorf("image volume %s: %w", name, err)
	}
	if err := os.WriteFile(marker, []byte(strconv.FormatInt(vsize, 10)), 0o640); err != nil {
		return ci, false, err
	}
	_ = os.Remove(staged)
	return cachedImage{Volume: vol, Format: format, VirtualSize: vsize}, false, nil
}

// download fetches the image's bytes from the API into staged, resuming what an earlier
// attempt left there, and checks them against sum (hex sha256).
func (c *imageCache) download(ctx context.Context, img *Image, staged, sum string) error {
	have := int64(0)
	if st, err := os.Stat(staged); err == nil {
		have = st.Size()
	}
	if have > img.SizeBytes {
		have = 0
	}
	if have < img.SizeBytes || img.SizeBytes == 0 {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/images/"+img.Id+"/data", nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+c.token)
		if have > 0 {
			req.Header.Set("Range", "bytes="+strconv.FormatInt(have, 10)+"-")
		}
		resp, err := c.http.Do(req)
		if err != nil {
			return fmt.Errorf("download image %s: %w", img.Id, err)
		}
		defer resp.Body.Close()
		flags := os.O_WRONLY | os.O_CREATE
		switch resp.StatusCode {
		case http.StatusPartialContent:
			flags |= os.O_APPEND
		case http.StatusOK:
			flags |= os.O_TRUNC
			have = 0
		default:
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			return fmt.Errorf("download image %s: %s: %s", img.Id, resp.Status, strings.TrimSpace(string(b)))
		}
		f, err := os.OpenFile(staged, flags, 0o640)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, resp.Body)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("download image %s: %w", img.Id, err)
		}
	}
	f, err := os.Open(staged)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sum {
		_ = os.Remove(staged)
		return fmt.Errorf("image %s: downloaded bytes have sha256:%s, the image says sha256:%s", img.Id, got, sum)
	}
	return nil
}

// qcow2VirtualSize reads the guest-visible size from a qcow2 header.
func qcow2VirtualSize(r io.ReaderAt) (int64, error) {
	var hdr [32]byte
	if _, err := r.ReadAt(hdr[:], 0); err != nil {
		return 0, fmt.Errorf("read qcow2 header: %w", err)
	}
	if string(hdr[:4]) != "QFI\xfb" {
		return 0, errors.New("not a qcow2 image")
	}
	return int64(binary.BigEndian.Uint64(hdr[24:32])), nil
}

// rootVolumeName is the pool volume of a VM's root disk.
func rootVolumeName(vmID int64) string { return hypervisor.DomainName(vmID) + "-root" }

// rootDisk returns the root disk of VM vmID on image img: a qcow2 overlay volume backed by
// the node's cached copy of the image, as large as the flavor's disk (or the image, when
// that is larger); an overlay smaller than that (the VM was resized) is grown. An ISO image is attached as a CD-ROM instead, beside an empty root disk
// of the flavor's size when it has one. It also says whether the image was cached already.
func (ag *Agent) rootDisks(ctx context.Context, vmID int64, img *Image, diskGB int64) ([]hypervisor.Disk, bool, error) {
	ci, hit, err := ag.images.ensure(ctx, img)
	if err != nil {
		return nil, false, err
	}
	pool := ag.images.pool.Name
	if img.Format == ImageFormatIso {
		disks := []hypervisor.Disk{{Path: ci.Volume.Path, Format: "raw", Bus: "sata", Device: "cdrom"}}
		if diskGB > 0 {
			v, err := ag.hv.CreateVolume(ctx, pool, hypervisor.VolumeSpec{Name: rootVolumeName(vmID), CapacityBytes: diskGB << 30})
			if err != nil {
				return nil, hit, fmt.Errorf("root disk: %w", err)
			}
			if v.CapacityBytes < diskGB<<30 {
				if v, err = ag.hv.GrowVolume(ctx, pool, v.Name, diskGB<<30); err != nil {
					return nil, hit, fmt.Errorf("grow root disk to %d GiB: %w", diskGB, err)
				}
			}
			disks = append([]hypervisor.Disk{{Path: v.Path}}, disks...)
		}
		return disks, hit, nil
	}
	size := max(diskGB<<30, ci.VirtualSize)
	backing := &hypervisor.Backing{Path: ci.Volume.Path, Format: ci.Format}
	v, err := ag.hv.CreateVolume(ctx, pool, hypervisor.VolumeSpec{Name: rootVolumeName(vmID), CapacityBytes: size, Backing: backing})
	if err != nil {
		return nil, hit, fmt.Errorf("root disk: %w", err)
	}
	if v.CapacityBytes < size {
		// The VM was resized to a flavor with a larger disk: the overlay grows with it (the
		// guest grows its partition and file system, e.g. cloud-init's growpart).
		if v, err = ag.hv.GrowVolume(ctx, pool, v.Name, size); err != nil {
			return nil, hit, fmt.Errorf("grow root disk to %d GiB: %w", diskGB, err)
		}
	}
	return []hypervisor.Disk{{Path: v.Path, Format: "qcow2", Backing: backing}}, hit, nil
}

// removeDisks deletes the root disk of VM vmID, with the domain it belonged to.
func (ag *Agent) removeDisks(ctx context.Context, vmID int64) error {
	if err := ag.hv.DeleteVolume(ctx, ag.images.pool.Name, rootVolumeName(vmID)); err != nil {
		return fmt.Errorf("delete root disk: %w", err)
	}
	return nil
}

// imageDisks puts the root disks of a's VM in front of spec's disks when the VM has an
// image (rootDisks): the image is cached on the node first when it is not yet. A VM restored
// from a backup gets a copy of the backup instead (restoredDisks; fresh: its domain is not
// defined yet).
func (ag *Agent) imageDisks(ctx context.Context, a Assignment, spec *hypervisor.DomainSpec, fresh bool) error {
	vm := a.VirtualMachine
	if vm == nil || (vm.Image == nil && vm.RestoredFrom == nil) {
		return nil
	}
	var disks []hypervisor.Disk
	var err error
	if vm.RestoredFrom != nil {
		disks, err = ag.restoredDisks(ctx, spec.VMID, vm, fresh)
	} else {
		var hit bool
		disks, hit, err = ag.rootDisks(ctx, spec.VMID, vm.Image, vm.Flavor.DiskGB)
		ag.log.Debug("root disk ready", "vm", spec.VMID, "image", vm.Image.Id, "image_cached", hit)
	}
	if err != nil {
		return err
	}
	for i := range disks {
		if disks[i].Device != "cdrom" { // the flavor's IO limits (<iotune>) apply to the root disk
			disks[i].IOPS, disks[i].MBps = deref(vm.Flavor.DiskIopsLimit), deref(vm.Flavor.DiskMbpsLimit)
		}
	}
	spec.Disks = append(disks, spec.Disks...)
	return spec.Validate()
}
