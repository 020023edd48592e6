package hypervisor

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
)

// simPool is one simulated storage pool: volumes exist only in the process, and uploaded
// bytes are counted, not kept.
type simPool struct {
	path string
	vols map[string]*Volume
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
		s.storage.pools[spec.Name] = &simPool{path: spec.Path, vols: map[string]*Volume{}}
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
		delete(p.vols, name)
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
	v, ok := sp.vols[src]
	if !ok {
		return Volume{}, volumeNotFound(srcPool, src)
	}
	dp, err := s.pool(dstPool)
	if err != nil {
		return Volume{}, err
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
