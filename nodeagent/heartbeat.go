package nodeagent

import (
	"context"
	"fmt"
)

// Heartbeat sends one reportNodeStatus with the host's capacity. A hypervisor that cannot
// tell its capacity makes the node unhealthy, with the reason.
func (ag *Agent) Heartbeat(ctx context.Context) error {
	version := ag.cfg.AgentVersion
	s := NodeStatusInput{NodeID: ag.NodeID(), AgentVersion: &version, Healthy: true}
	c, err := ag.hv.Capacity(ctx)
	if err != nil {
		// Without a capacity reading (null), the last recorded one stays.
		msg := fmt.Sprintf("hypervisor unavailable: %v", err)
		s.Healthy, s.Message = false, &msg
		return ag.api.reportNode(ctx, s)
	}
	if ag.cfg.DiskCapacityGB > 0 {
		d := ag.cfg.DiskCapacityGB
		s.DiskCapacityGB = &d
	}
	cpus, mem := max(c.VCPUs-ag.cfg.ReservedCPUs, 0), int(c.MemoryMiB)
	s.CpuCapacity, s.MemoryCapacityMB = &cpus, &mem
	return ag.api.reportNode(ctx, s)
}
