package nodestatus

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/virtflow/virtflow/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/computenode"
)

// Report is one heartbeat of a node agent. Nil capacities and version leave the recorded
// values as they are.
type Report struct {
	NodeID           int
	CPUCapacity      *int
	MemoryCapacityMB *int
	DiskCapacityGB   *int
	AgentVersion     *string
	// Healthy marks the node READY; false marks it NOT_READY with Message as the reason.
	Healthy bool
	Message *string
	// RequestCordon asks for the node to be cordoned. It is honoured when the node has
	// auto_cordon set; otherwise the request is recorded in status_reason for an operator.
	RequestCordon *bool
}

// DefaultCordonReason is the cordon reason when the agent gives no message.
const DefaultCordonReason = "cordoned at the node agent's request"

// Now is the clock of heartbeats; tests may replace it.
var Now = time.Now

// Apply records r on its node through c (the mutation's transaction client, so that privacy
// and the audit log apply) and returns the updated node.
func Apply(ctx context.Context, c *ent.Client, r Report) (*ent.ComputeNode, error) {
	if err := r.validate(); err != nil {
		return nil, err
	}
	cordon := r.RequestCordon != nil && *r.RequestCordon
	var node *ent.ComputeNode
	if cordon { // only a cordon request needs the node's settings first
		var err error
		node, err = c.ComputeNode.Query().Where(computenode.ID(r.NodeID)).
			Select(computenode.FieldSchedulable, computenode.FieldAutoCordon).Only(ctx)
		if ent.IsNotFound(err) {
			return nil, apierr.NotFound("compute node %d not found", r.NodeID)
		}
		if err != nil {
			return nil, err
		}
	}

	u := c.ComputeNode.UpdateOneID(r.NodeID).SetLastHeartbeatAt(Now())
	if r.CPUCapacity != nil {
		u.SetCPUCapacity(*r.CPUCapacity)
	}
	if r.MemoryCapacityMB != nil {
		u.SetMemoryCapacityMB(int64(*r.MemoryCapacityMB))
	}
	if r.DiskCapacityGB != nil {
		u.SetDiskCapacityGB(int64(*r.DiskCapacityGB))
	}
	if r.AgentVersion != nil {
		u.SetAgentVersion(*r.AgentVersion)
	}
	msg := ""
	if r.Message != nil {
		msg = strings.TrimSpace(*r.Message)
	}
	reason := ""
	if r.Healthy {
		u.SetStatus(computenode.StatusReady)
	} else {
		u.SetStatus(computenode.StatusNotReady)
		reason = msg
		if reason == "" {
			reason = "the node agent reports the node unhealthy"
		}
	}
	if cordon {
		switch {
		case !node.AutoCordon:
			reason = joinReason(reason, "the node asks to be cordoned; auto-cordon is off, so an operator must cordon it")
		case node.Schedulable:
			cr := msg
			if cr == "" {
				cr = DefaultCordonReason
			}
			u.SetSchedulable(false).SetCordonReason(truncate(cr))
		}
	}
	if reason == "" {
		u.ClearStatusReason()
	} else {
		u.SetStatusReason(truncate(reason))
	}
	n, err := u.Save(ctx)
	if ent.IsNotFound(err) {
		return nil, apierr.NotFound("compute node %d not found", r.NodeID)
	}
	if err != nil {
		return nil, fmt.Errorf("record heartbeat of node %d: %w", r.NodeID, err)
	}
	return n, nil
}

// validate checks the numbers of r; errors name the GraphQL input fields.
func (r Report) validate() error {
	for _, f := range []struct {
		name string
		v    *int
	}{{"cpuCapacity", r.CPUCapacity}, {"memoryCapacityMB", r.MemoryCapacityMB}, {"diskCapacityGB", r.DiskCapacityGB}} {
		if f.v != nil && *f.v < 0 {
			return apierr.Validation(f.name, "must not be negative")
		}
	}
	if r.AgentVersion != nil && len(*r.AgentVersion) > 64 {
		return apierr.Validation("agentVersion", "at most 64 characters")
	}
	return nil
}

// joinReason appends b to a, separated by "; ".
func joinReason(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// truncate bounds s to the 1,024 characters the reason columns hold.
func truncate(s string) string {
	if r := []rune(s); len(r) > 1024 {
		return string(r[:1024])
	}
	return s
}
