package hypervisor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"
)

// SetCPUAffinity confines the domain's vCPUs and emulator threads to the host CPUs cpus
// (a shared VM leaving the CPUs a dedicated VM was just pinned to): on the running instance
// at once, and in its definition for its next start. Empty cpus means every host CPU.
func (h *Libvirt) SetCPUAffinity(ctx context.Context, name string, cpus []int) error {
	return wrap("set CPU affinity of", name, h.do(ctx, func(c *libvirt.Libvirt) error {
		d, err := lookup(c, name)
		if err != nil {
			return err
		}
		_, _, hostCPUs, _, _, _, _, _, err := c.NodeGetInfo()
		if err != nil {
			return fmt.Errorf("get node info: %w", err)
		}
		cpumap := cpuMap(cpus, int(hostCPUs))
		st, err := stateOf(c, d)
		if err != nil {
			return err
		}
		n, err := c.DomainGetVcpusFlags(d, uint32(libvirt.DomainAffectConfig))
		if err != nil {
			return notFound(err, name)
		}
		// The running instance and the definition, one at a time: some drivers (libvirt's
		// test driver) take only one of them per call. A driver that cannot change one of
		// them is fine as long as it changes the other; the emulator pin is best effort
		// where the driver has none.
		impacts := []libvirt.DomainModificationImpact{libvirt.DomainAffectConfig}
		if st.Active() {
			impacts = append([]libvirt.DomainModificationImpact{libvirt.DomainAffectLive}, impacts...)
		}
		done := 0
		var firstErr error
		for i := 0; i < len(impacts); i++ {
			impact := impacts[i]
			err := func() error {
				for v := range uint32(n) {
					if err := c.DomainPinVcpuFlags(d, v, cpumap, uint32(impact)); err != nil {
						return fmt.Errorf("pin vCPU %d: %w", v, unsupportedFlags(err))
					}
				}
				if err := c.DomainPinEmulator(d, cpumap, impact); err != nil && !errors.Is(unsupportedFlags(err), ErrUnsupported) {
					return fmt.Errorf("pin emulator: %w", err)
				}
				return nil
			}()
			switch {
			case err == nil:
				done++
			case errors.Is(err, ErrUnsupported):
				if firstErr == nil {
					firstErr = err
				}
			default:
				return err
			}
			if i == len(impacts)-1 && done == 0 && impact != libvirt.DomainAffectCurrent {
				// Neither flag taken (the test driver): the domain's current state.
				impacts = append(impacts, libvirt.DomainAffectCurrent)
			}
		}
		if done == 0 {
			return firstErr
		}
		return nil
	}))
}

// CPUAffinity returns the host CPUs each vCPU of the domain may run on, as libvirt applies
// them now (the running instance's while it runs).
func (h *Libvirt) CPUAffinity(ctx context.Context, name string) ([][]int, error) {
	var out [][]int
	err := h.do(ctx, func(c *libvirt.Libvirt) error {
		d, err := lookup(c, name)
		if err != nil {
			return err
		}
		_, _, hostCPUs, _, _, _, _, _, err := c.NodeGetInfo()
		if err != nil {
			return fmt.Errorf("get node info: %w", err)
		}
		n, err := c.DomainGetVcpusFlags(d, uint32(libvirt.DomainAffectCurrent))
		if err != nil {
			return notFound(err, name)
		}
		maplen := (int(hostCPUs) + 7) / 8
		maps, _, err := c.DomainGetVcpuPinInfo(d, n, int32(maplen), uint32(libvirt.DomainAffectCurrent))
		if err != nil {
			return err
		}
		for v := range int(n) {
			var cpus []int
			for cpu := range int(hostCPUs) {
				if b := v*maplen + cpu/8; b < len(maps) && maps[b]&(1<<(cpu%8)) != 0 {
					cpus = append(cpus, cpu)
				}
			}
			out = append(out, cpus)
		}
		return nil
	})
	return out, wrap("get CPU affinity of", name, err)
}

// unsupportedFlags is unsupported, also for a driver's "unsupported flags" (an invalid
// argument, as virCheckFlags reports it).
func unsupportedFlags(err error) error {
	if isCode(err, libvirt.ErrInvalidArg) && strings.Contains(err.Error(), "unsupported flags") {
		return fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	return unsupported(err)
}

// cpuMap is libvirt's bitmap of cpus over hostCPUs CPUs; empty cpus sets every bit.
func cpuMap(cpus []int, hostCPUs int) []byte {
	m := make([]byte, (hostCPUs+7)/8)
	if len(cpus) == 0 {
		for c := range hostCPUs {
			m[c/8] |= 1 << (c % 8)
		}
		return m
	}
	for _, c := range cpus {
		if c >= 0 && c < hostCPUs {
			m[c/8] |= 1 << (c % 8)
		}
	}
	return m
}

// numaNodes reads the host's NUMA cells from libvirt's capabilities, sorted by id.
func numaNodes(c *libvirt.Libvirt) ([]NUMANode, error) {
	x, err := c.ConnectGetCapabilities()
	if err != nil {
		return nil, fmt.Errorf("get capabilities: %w", err)
	}
	var caps libvirtxml.Caps
	if err := caps.Unmarshal(x); err != nil {
		return nil, fmt.Errorf("parse capabilities: %w", err)
	}
	if caps.Host.NUMA == nil || caps.Host.NUMA.Cells == nil {
		return nil, nil
	}
	var out []NUMANode
	for _, cell := range caps.Host.NUMA.Cells.Cells {
		n := NUMANode{ID: cell.ID}
		if cell.Memory != nil {
			n.MemoryMiB = int64(memoryMiB(cell.Memory.Size, cell.Memory.Unit))
		}
		if cell.CPUS != nil {
			for _, cpu := range cell.CPUS.CPUs {
				n.CPUs = append(n.CPUs, cpu.ID)
			}
		}
		slices.Sort(n.CPUs)
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b NUMANode) int { return a.ID - b.ID })
	return out, nil
}

// memoryMiB converts a libvirt memory size to MiB (the unit defaults to KiB).
func memoryMiB(size uint64, unit string) uint64 {
	switch unit {
	case "b", "bytes":
		return size >> 20
	case "", "KiB", "k":
		return size >> 10
	case "MiB", "M":
		return size
	case "GiB", "G":
		return size << 10
	case "KB":
		return size * 1000 >> 20
	case "MB":
		return size * 1000 * 1000 >> 20
	}
	return size >> 10
}
