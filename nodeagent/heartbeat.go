package nodeagent

import (
	"context"
	"fmt"
)

// Heartbeat sends one reportNodeStatus with the host's capacity. A hypervisor that cannot
// tell its capacity makes the node unhealthy, with the reason.
func (ag *Agent) Heartbeat(ctx context.Context) error {
	s := NodeStatus{NodeID: ag.NodeID(), AgentVersion: ag.cfg.AgentVersion, Healthy: true}
	if ag.cfg.DiskCapacityGB > 0 {
		d := ag.cfg.DiskCapacityGB
		s.DiskCapacityGB = &d
	}
	c, err := ag.hv.Capacity(ctx)
	if err != nil {
		msg := fmt.Sprintf("hypervisor unavailable: %v", err)
		s.Healthy, s.Message = false, &msg
		// Without a capacity reading, the last recorded one stays.
		return ag.sendHeartbeat(ctx, s, true)
	}
	s.CPUCapacity = max(c.VCPUs-ag.cfg.ReservedCPUs, 0)
	s.MemoryCapacityMB = int(c.MemoryMiB)
	return ag.sendHeartbeat(ctx, s, false)
}

// sendHeartbeat sends s, leaving out the capacity when noCapacity is set.
func (ag *Agent) sendHeartbeat(ctx context.Context, s NodeStatus, noCapacity bool) error {
	if !noCapacity {
		return ag.api.reportNode(ctx, s)
	}
	in := map[string]any{"nodeID": s.NodeID, "agentVersion": s.AgentVersion, "healthy": s.Healthy, "message": s.Message}
	return ag.api.Do(ctx, `mutation($in: NodeStatusInput!) { reportNodeStatus(input: $in) { id } }`, map[string]any{"in": in}, nil)
}
