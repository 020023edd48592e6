package hypervisor

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// simPool is one simulated storage pool: volumes exist only in the process, and uploaded
// bytes are counted, not kept. A pool over [SharedStorage] is the same simPool on every
// simulated host that made it, guarded by the shared storage's mutex (nil for a local pool).
type simPool struct {
	path string
	vols map[string]*Volume
	mu   *sync.Mutex
}

// lock locks a shared pool (a local one is guarded by its host's mutex already).
func (p *simPool) lock() {
	if p.mu != nil {
		p.mu.Lock()
	}
}

// unlock undoes lock.
func (p *simPool) unlock() {
	if p.mu != nil {
		p.mu.Unlock()
	}
}

// SharedStorage is storage several simulated hosts mount at the same paths, as the nodes of
// a region mount its backup target over NFS: a pool made over one of Dirs (or a directory
// under one) holds the same volumes on each host that made it, so that a backup one
// simulated node wrote is restored by another. Give the same *SharedStorage to each host's
// [SimulatedConfig]; Dirs must not change once it is in use.
type SharedStorage struct {
	Dirs []string

	mu    sync.Mutex
	pools map[string]*simPool // by path
}

// poolAt returns the shared pool over path, made on first use, or nil when path is not
// under one of the shared directories.
func (sh *SharedStorage) poolAt(path string) *simPool {
	if sh == nil {
		return nil
	}
	clean := filepath.Clean(path)
	shared := false
	for _, d := range sh.Dirs {
		d = filepath.Clean(d)
		if clean == d || strings.HasPrefix(clean, d+string(filepath.Separator)) {
			shared = true
			break
		}
	}
	if !shared {
		return nil
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.pools == nil {
		sh.pools = map[string]*simPool{}
	}
	p, ok := sh.pools[clean]
	if !ok {
		p = &simPool{path: path, vols: map[string]*Volume{}, mu: &sh.mu}
		sh.pools[clean] = p
	}
	return p
}

// simStorage is the storage part of [Simulated]; its fields are guarded by Simulated.mu.
type simStorage struct {
	pools map[string]*simPool
}

// pool returns the named pool; s.mu must be held.
func (s *Simulated) pool(name string) (*simPool, error) {
	p, ok := s.storage.pools[name]
	if !ok {
		return nil, poolNotFound(name)
	}
	return p, nil
}

// PoolInfo returns the configured size of a simulated pool (SimulatedConfig.PoolCapacityBytes)
// and what its volumes take; see [Storage.PoolInfo].
func (s *Simulated) PoolInfo(ctx context.Context, pool string) (PoolInfo, error) {
	if err := s.begin(ctx, "read pool", pool, 0, false); err != nil {
		return PoolInfo{}, err
	}
	defer s.mu.Unlock()
	p, err := s.pool(pool)
	if err != nil {
		return PoolInfo{}, err
	}
	p.lock()
	defer p.unlock()
	info := PoolInfo{CapacityBytes: s.cfg.PoolCapacityBytes}
	for _, v := range p.vols {
		info.AllocationBytes += v.AllocationBytes
	}
	info.AvailableBytes = max(info.CapacityBytes-info.AllocationBytes, 0)
	return info, nil
}

// EnsurePool creates the pool in memory; see [Storage.EnsurePool].
func (s *Simulated) EnsurePool(ctx context.Context, spec PoolSpec) error {
	if err := spec.validate(); err != nil {
		return err
	}
	if err := s.begin(ctx, "ensure pool", spec.Name, 0, true); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if s.storage.pools == nil {
		s.storage.pools = map[string]*simPool{}
	}
	if _, ok := s.storage.pools[spec.Name]; !ok {
		if p := s.cfg.Shared.poolAt(spec.Path); p != nil {
			s.storage.pools[spec.Name] = p
		} else {
			s.storage.pools[spec.Name] = &simPool{path: spec.Path, vols: map[string]*Volume{}}
		}
	}
	return nil
}

// CreateVolume creates a volume in memory or returns the existing one; see
// [Storage.CreateVolume].
func (s *Simulated) CreateVolume(ctx context.Context, pool string, spec VolumeSpec) (Volume, error) {
	n, err := spec.normalize()
	if err != nil {
		return Volume{}, err
	}
	if err := s.begin(ctx, "create volume", pool+"/"+n.Name, s.cfg.Delays.Define, true); err != nil {
		return Volume{}, err
	}
	defer s.mu.Unlock()
	p, err := s.pool(pool)
	if err != nil {
		return Volume{}, err
	}
	p.lock()
	defer p.unlock()
	if v, ok := p.vols[n.Name]; ok {
		return cloneVolume(v), nil
	}
	v := &Volume{Name: n.Name, Path: filepath.Join(p.path, n.Name), Format: n.Format, CapacityBytes: n.CapacityBytes}
	if n.Backing != nil {
		b := *n.Backing
		v.Backing = &b
	}
	p.vols[n.Name] = v
	return cloneVolume(v), nil
}

// UploadVolume reads r to its end and counts the bytes as the volume's allocation; see
// [Storage.UploadVolume].
func (s *Simulated) UploadVolume(ctx context.Context, pool, name string, r io.Reader, length int64) error {
	if _, err := s.Volume(ctx, pool, name); err != nil {
		return err
	}
	n, err := io.Copy(io.Discard, io.LimitReader(r, length))
	if err != nil {
		return fmt.Errorf("upload volume %s/%s: %w", pool, name, err)
	}
	if n != length {
		return fmt.Errorf("upload volume %s/%s: %d of %d bytes", pool, name, n, length)
	}
	if err := s.begin(ctx, "upload volume", pool+"/"+name, 0, true); err != nil {
		return err
	}
	defer s.mu.Unlock()
	p, err := s.pool(pool)
	if err != nil {
		return err
	}
	p.lock()
	defer p.unlock()
	v, ok := p.vols[name]
	if !ok {
		return volumeNotFound(pool, name)
	}
	v.AllocationBytes = max(v.AllocationBytes, length)
	return nil
}

// Volume returns a simulated volume; see [Storage.Volume].
func (s *Simulated) Volume(ctx context.Context, pool, name string) (Volume, error) {
	if err := s.begin(ctx, "get volume", pool+"/"+name, 0, false); err != nil {
		return Volume{}, err
	}
	defer s.mu.Unlock()
	p, err := s.pool(pool)
	if err != nil {
		return Volume{}, err
	}
	p.lock()
	defer p.unlock()
	v, ok := p.vols[name]
	if !ok {
		return Volume{}, volumeNotFound(pool, name)
	}
	return cloneVolume(v), nil
}

// ListVolumes returns a pool's simulated volumes; see [Storage.ListVolumes].
func (s *Simulated) ListVolumes(ctx context.Context, pool string) ([]Volume, error) {
	if err := s.begin(ctx, "list volumes", pool, 0, false); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	p, err := s.pool(pool)
	if err != nil {
		return nil, err
	}
	p.lock()
	defer p.unlock()
	out := make([]Volume, 0, len(p.vols))
	for _, v := range p.vols {
		out = append(out, cloneVolume(v))
	}
	slices.SortFunc(out, func(a, b Volume) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// DeleteVolume removes a simulated volume; see [Storage.DeleteVolume].
func (s *Simulated) DeleteVolume(ctx context.Context, pool, name string) error {
	if err := s.begin(ctx, "delete volume", pool+"/"+name, s.cfg.Delays.Undefine, true); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if p, ok := s.storage.pools[pool]; ok {
		p.lock()
		delete(p.vols, name)
		p.unlock()
	}
	return nil
}

// GrowVolume grows a simulated volume; see [Storage.GrowVolume].
func (s *Simulated) GrowVolume(ctx context.Context, pool, name string, capacityBytes int64) (Volume, error) {
	if err := s.begin(ctx, "grow volume", pool+"/"+name, s.cfg.Delays.Define, true); err != nil {
		return Volume{}, err
	}
	defer s.mu.Unlock()
	p, err := s.pool(pool)
	if err != nil {
		return Volume{}, err
	}
	p.lock()
	defer p.unlock()
	v, ok := p.vols[name]
	if !ok {
		return Volume{}, volumeNotFound(pool, name)
	}
	v.CapacityBytes = max(v.CapacityBytes, capacityBytes)
	return cloneVolume(v), nil
}

// CopyVolume copies a simulated volume (its record: the simulation keeps no bytes); see
// [Storage.CopyVolume].
func (s *Simulated) CopyVolume(ctx context.Context, srcPool, src, dstPool, dst string) (Volume, error) {
	if _, err := (VolumeSpec{Name: dst, CapacityBytes: 1}).normalize(); err != nil {
		return Volume{}, err
	}
	if err := s.begin(ctx, "copy volume", srcPool+"/"+src, s.cfg.Delays.Define, true); err != nil {
		return Volume{}, err
	}
	defer s.mu.Unlock()
	sp, err := s.pool(srcPool)
	if err != nil {
		return Volume{}, err
	}
	dp, err := s.pool(dstPool)
	if err != nil {
		return Volume{}, err
	}
	// One SharedStorage has one mutex: lock it once when either pool is shared.
	if sp.mu != nil {
		sp.lock()
		defer sp.unlock()
	} else if dp.mu != nil {
		dp.lock()
		defer dp.unlock()
	}
	v, ok := sp.vols[src]
	if !ok {
		return Volume{}, volumeNotFound(srcPool, src)
	}
	c := &Volume{Name: dst, Path: filepath.Join(dp.path, dst), Format: "qcow2",
		CapacityBytes: v.CapacityBytes, AllocationBytes: v.AllocationBytes}
	dp.vols[dst] = c
	return cloneVolume(c), nil
}

// cloneVolume copies v so that callers never share the simulated state.
func cloneVolume(v *Volume) Volume {
	c := *v
	if v.Backing != nil {
		b := *v.Backing
		c.Backing = &b
	}
	return c
}

// DeletePool removes a simulated pool and its volumes; a missing pool is not an error.
func (s *Simulated) DeletePool(_ context.Context, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.storage.pools, name)
	return nil
}

// Disks returns the domain's disks; see [Hypervisor.Disks].
func (s *Simulated) Disks(ctx context.Context, name string) ([]Disk, error) {
	if err := s.begin(ctx, "get disks of", name, s.cfg.Delays.State, false); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	d, err := s.get(name)
	if err != nil {
		return nil, err
	}
	if d.state.Active() {
		return slices.Clone(d.live), nil
	}
	return slices.Clone(d.spec.Disks), nil
}

// AttachDisk hot-plugs a disk into a running domain; see [Hypervisor.AttachDisk].
func (s *Simulated) AttachDisk(ctx context.Context, name string, disk Disk) error {
	if err := s.begin(ctx, "attach disk to", name, s.cfg.Delays.Define, true); err != nil {
		return err
	}
	defer s.mu.Unlock()
	d, err := s.get(name)
	if err != nil {
		return err
	}
	if !d.state.Active() || slices.ContainsFunc(d.live, func(x Disk) bool { return x.Path == disk.Path }) {
		return nil
	}
	d.live = append(d.live, disk)
	return nil
}

// DetachDisk hot-unplugs a disk from a running domain; see [Hypervisor.DetachDisk].
func (s *Simulated) DetachDisk(ctx context.Context, name, path string) error {
	if err := s.begin(ctx, "detach disk from", name, s.cfg.Delays.Define, true); err != nil {
		return err
	}
	defer s.mu.Unlock()
	d, err := s.get(name)
	if err != nil {
		return err
	}
	d.live = slices.DeleteFunc(d.live, func(x Disk) bool { return x.Path == path })
	return nil
}
