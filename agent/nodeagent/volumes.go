package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/virtflow/virtflow/agent/hypervisor"
)

// Volumes on the node (see controllers/provision/volumes.go for their life on the server): each volume
// is a qcow2 volume named vf-vol-<id> in the node's storage pool, created and deleted through
// the volume's own assignment (realizeVolume), and put into its VM's domain as a virtio disk
// after the root disk, in volume id order (volumeDisks). A volume attached or detached while
// the VM runs is hot-plugged (syncVolumes) where the hypervisor allows it, otherwise it comes
// or goes with the domain's next cold start; every report on a VM's assignment says which
// volumes its domain has now, which is what moves them to ATTACHED or AVAILABLE.

// volumePrefix starts the name of a volume's pool volume.
const volumePrefix = "vf-vol-"

// Observed state of a volume that exists in the pool.
const observedPresent = "present"

// volumeName is the pool volume of VirtFlow volume id.
func volumeName(id string) string { return volumePrefix + id }

// volumeIDOf is the VirtFlow volume id of a disk's path, ok false for a disk that is no volume.
func volumeIDOf(path string) (int64, bool) {
	rest, ok := strings.CutPrefix(filepath.Base(path), volumePrefix)
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	return id, err == nil && id > 0
}

// realizeVolume creates (desired RUNNING) or deletes (ABSENT) the pool volume of a volume's
// assignment and reports the outcome. An assignment APPLIED at its generation is done.
func (ag *Agent) realizeVolume(ctx context.Context, a Assignment) {
	if a.Status == AssignmentStatusApplied {
		return
	}
	v := a.Volume
	name := volumeName(v.Id)
	pool := ag.images.pool.Name
	var err error
	obs := observedPresent
	if err = ag.images.ensurePool(ctx); err == nil {
		switch a.DesiredState {
		case AssignmentDesiredStateAbsent:
			obs = observedAbsent
			err = ag.hv.DeleteVolume(ctx, pool, name)
		default:
			_, err = ag.hv.CreateVolume(ctx, pool, hypervisor.VolumeSpec{Name: name, Format: "qcow2", CapacityBytes: v.SizeGB << 30})
		}
	}
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		ag.log.Warn("volume assignment failed", "assignment", a.Id, "volume", name, "err", err)
		ag.report(ctx, a, AssignmentStatusFailed, "unknown", err.Error(), true)
		return
	}
	ag.log.Info("volume assignment applied", "assignment", a.Id, "volume", name, "observed", obs)
	ag.report(ctx, a, AssignmentStatusApplied, obs, "", true)
}

// wantedVolumes are the ids of the volumes a's VM should have, ascending: those ATTACHING or
// ATTACHED (a DETACHING one is on its way out).
func wantedVolumes(a Assignment) []VMVolume {
	vm := a.VirtualMachine
	if vm == nil {
		return nil
	}
	var out []VMVolume
	for _, e := range vm.Volumes.Edges {
		if e == nil || e.Node == nil {
			continue
		}
		if st := e.Node.Status; st == VolumeStatusAttaching || st == VolumeStatusAttached {
			out = append(out, *e.Node)
		}
	}
	slices.SortFunc(out, func(x, y VMVolume) int {
		i, _ := strconv.ParseInt(x.Id, 10, 64)
		j, _ := strconv.ParseInt(y.Id, 10, 64)
		return int(i - j)
	})
	return out
}

// volumeDisks appends the disks of a's wanted volumes to spec, after its root disk, making
// sure each exists in the pool (a volume whose own assignment has not been realized yet).
func (ag *Agent) volumeDisks(ctx context.Context, a Assignment, spec *hypervisor.DomainSpec) error {
	vols := wantedVolumes(a)
	if len(vols) == 0 {
		return nil
	}
	if err := ag.images.ensurePool(ctx); err != nil {
		return err
	}
	for _, v := range vols {
		pv, err := ag.hv.CreateVolume(ctx, ag.images.pool.Name,
			hypervisor.VolumeSpec{Name: volumeName(v.Id), Format: "qcow2", CapacityBytes: v.SizeGB << 30})
		if err != nil {
			return fmt.Errorf("volume %s: %w", v.Id, err)
		}
		spec.Disks = append(spec.Disks, hypervisor.Disk{Path: pv.Path, Format: "qcow2"})
	}
	return spec.Validate()
}

// syncVolumes hot-plugs into the running domain name the volume disks of spec it lacks and
// unplugs the volume disks it has beyond them. It returns a note for the report when the
// hypervisor cannot hot-plug (the change then comes with the next cold start).
func (ag *Agent) syncVolumes(ctx context.Context, name string, spec hypervisor.DomainSpec) (string, error) {
	have, err := ag.hv.Disks(ctx, name)
	if err != nil {
		return "", err
	}
	isVolume := func(d hypervisor.Disk) bool { _, ok := volumeIDOf(d.Path); return ok }
	contains := func(ds []hypervisor.Disk, path string) bool {
		return slices.ContainsFunc(ds, func(d hypervisor.Disk) bool { return d.Path == path })
	}
	var deferred []string
	for _, d := range have {
		if isVolume(d) && !contains(spec.Disks, d.Path) {
			if err := ag.hv.DetachDisk(ctx, name, d.Path); errors.Is(err, hypervisor.ErrUnsupported) {
				deferred = append(deferred, "detach "+filepath.Base(d.Path))
			} else if err != nil {
				return "", err
			}
		}
	}
	for _, d := range spec.Disks {
		if isVolume(d) && !contains(have, d.Path) {
			if err := ag.hv.AttachDisk(ctx, name, d); errors.Is(err, hypervisor.ErrUnsupported) {
				deferred = append(deferred, "attach "+filepath.Base(d.Path))
			} else if err != nil {
				return "", err
			}
		}
	}
	if len(deferred) == 0 {
		return "", nil
	}
	return fmt.Sprintf("the hypervisor cannot change the disks of a running VM: %s takes effect at the VM's next start",
		strings.Join(deferred, ", ")), nil
}

// domainVolumes lists the volume ids the domain name has now, for the report.
func (ag *Agent) domainVolumes(ctx context.Context, name string) (string, error) {
	disks, err := ag.hv.Disks(ctx, name)
	if err != nil {
		return "", err
	}
	var ids []int64
	for _, d := range disks {
		if id, ok := volumeIDOf(d.Path); ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(parts, ","), nil
}
