package hypervisor

import (
	"context"
	"fmt"
	"strings"

	"github.com/digitalocean/go-libvirt"
)

// DomainStats is the usage of one domain VirtFlow manages, as libvirt's domain statistics
// report it. Counters grow for the life of the running instance.
type DomainStats struct {
	Name  string
	VMID  int64
	State DomainState
	// CPUSeconds is the CPU time the domain used (counter).
	CPUSeconds float64
	VCPUs      int
	// MemoryBytes is the memory the guest has now (balloon), MemoryMaxBytes its maximum.
	MemoryBytes, MemoryMaxBytes uint64
	// Disk and network I/O summed over the domain's disks and interfaces (counters).
	DiskReadBytes, DiskWriteBytes, NetRxBytes, NetTxBytes uint64
}

// StatsReader is implemented by hypervisors that report their domains' usage (the agent's
// /metrics). Like [Consoler] it is not part of [Hypervisor].
type StatsReader interface {
	// DomainStats returns the usage of every domain VirtFlow manages on the host.
	DomainStats(ctx context.Context) ([]DomainStats, error)
}

var _ StatsReader = (*Libvirt)(nil)

// DomainStats reads every domain's statistics in one call (ConnectGetAllDomainStats) and
// keeps those of VirtFlow's domains (named by DomainName).
func (h *Libvirt) DomainStats(ctx context.Context) ([]DomainStats, error) {
	var recs []libvirt.DomainStatsRecord
	err := h.do(ctx, func(c *libvirt.Libvirt) error {
		var err error
		recs, err = c.ConnectGetAllDomainStats(nil, uint32(libvirt.DomainStatsState|libvirt.DomainStatsCPUTotal|
			libvirt.DomainStatsBalloon|libvirt.DomainStatsVCPU|libvirt.DomainStatsInterface|libvirt.DomainStatsBlock), 0)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("domain stats: %w", err)
	}
	out := make([]DomainStats, 0, len(recs))
	for _, r := range recs {
		id, ok := ParseDomainName(r.Dom.Name)
		if !ok {
			continue
		}
		s := DomainStats{Name: r.Dom.Name, VMID: id, State: StateUnknown}
		for _, p := range r.Params {
			v, ok := paramUint(p.Value)
			if !ok {
				continue
			}
			f := p.Field
			switch {
			case f == "state.state":
				s.State = mapState(libvirt.DomainState(v))
			case f == "cpu.time":
				s.CPUSeconds = float64(v) / 1e9
			case f == "vcpu.current":
				s.VCPUs = int(v)
			case f == "balloon.current":
				s.MemoryBytes = v * 1024
			case f == "balloon.maximum":
				s.MemoryMaxBytes = v * 1024
			case strings.HasPrefix(f, "block.") && strings.HasSuffix(f, ".rd.bytes"):
				s.DiskReadBytes += v
			case strings.HasPrefix(f, "block.") && strings.HasSuffix(f, ".wr.bytes"):
				s.DiskWriteBytes += v
			case strings.HasPrefix(f, "net.") && strings.HasSuffix(f, ".rx.bytes"):
				s.NetRxBytes += v
			case strings.HasPrefix(f, "net.") && strings.HasSuffix(f, ".tx.bytes"):
				s.NetTxBytes += v
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// paramUint is a typed parameter's value as an unsigned integer, for the integer types.
func paramUint(v libvirt.TypedParamValue) (uint64, bool) {
	switch x := v.I.(type) {
	case int32:
		return uint64(max(x, 0)), true
	case uint32:
		return uint64(x), true
	case int64:
		return uint64(max(x, 0)), true
	case uint64:
		return x, true
	}
	return 0, false
}
