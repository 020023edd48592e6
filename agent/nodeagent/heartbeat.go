package nodeagent

import (
	"context"
	"fmt"
)

// Heartbeat sends one reportNodeStatus with the host's capacity (its storage pool's size
// as disk capacity), facts, domain type and providers. A hypervisor that cannot tell its
// capacity makes the node unhealthy, with the reason.
func (ag *Agent) Heartbeat(ctx context.Context) error {
	version := ag.cfg.AgentVersion
	s := NodeStatusInput{NodeID: ag.NodeID(), AgentVersion: &version, Healthy: true}
	r, err := readHostReport(ctx, ag.hv, ag.images.ensurePool, ag.images.pool.Name, ag.cfg.ReservedCPUs,
		ag.cfg.DiskCapacityGB, ag.facts)
	if err != nil {
		// Without a capacity reading (null), the last recorded one stays.
		msg := fmt.Sprintf("hypervisor unavailable: %v", err)
		s.Healthy, s.Message = false, &msg
		return sendHeartbeat(ctx, ag.api, s)
	}
	r.fill(&s)
	// The NUMA nodes go with the first heartbeat and when they change: a heartbeat
	// without them stays routine (a single UPDATE) on the server.
	numa := fmt.Sprint(r.NUMA)
	ag.mu.Lock()
	send := len(r.NUMA) > 0 && ag.numaSent != numa
	ag.mu.Unlock()
	if send {
		s.NumaNodes = r.NUMA
	}
	if err := sendHeartbeat(ctx, ag.api, s); err != nil {
		return err
	}
	if send {
		ag.mu.Lock()
		ag.numaSent = numa
		ag.mu.Unlock()
	}
	return nil
}
