package nodestatus

import (
	"context"
	"fmt"
	"strings"
	"time"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/alerting"
	"github.com/virtflow/virtflow/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/event"
	"github.com/virtflow/virtflow/ent/predicate"
	"github.com/virtflow/virtflow/internal/truncate"
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
	// IDOnly says the caller needs nothing of the node back but its ID (the node agent asks
	// for `{ id }`). A routine heartbeat then costs a single UPDATE, and Apply returns a node
	// whose only field set is ID; anything else it returns the node as it is now.
	IDOnly bool
	// At is when the heartbeat arrived, by the caller's clock (the resolver's, injected by
	// internal/app or a test); zero means time.Now().
	At time.Time
}

// maxReason is the size in bytes of the status and cordon reason columns (ent/schema).
const maxReason = 1024

// DefaultCordonReason is the cordon reason when the agent gives no message.
const DefaultCordonReason = "cordoned at the node agent's request"

// Apply records r on its node through c (the mutation's transaction client, so that privacy
// applies) and returns the updated node and whether the report changed anything beyond the
// heartbeat time: status, reason, capacity, agent version or cordon. A routine heartbeat
// that changes nothing writes only last_heartbeat_at, so it publishes no status event and,
// in package graph, leaves no audit row (at 5,000 nodes every 10 s those would be 43 million
// rows a day).
//
// A routine heartbeat takes a fast path (see routine): one conditional UPDATE that writes the
// time only if nothing else would change, committed without waiting for the WAL flush on
// PostgreSQL. When it matches no row — something changed, the node is not the caller's, or
// it does not exist — Apply reads the node and takes the full path below, which decides and
// reports exactly as if there were no fast path.
func Apply(ctx context.Context, c *ent.Client, r Report) (*ent.ComputeNode, bool, error) {
	if err := r.validate(); err != nil {
		return nil, false, err
	}
	if r.At.IsZero() {
		r.At = time.Now()
	}
	if ok, err := routine(ctx, c, r); err != nil {
		return nil, false, fmt.Errorf("record heartbeat of node %d: %w", r.NodeID, err)
	} else if ok {
		if r.IDOnly {
			return &ent.ComputeNode{ID: r.NodeID}, false, nil
		}
		n, err := c.ComputeNode.Get(ctx, r.NodeID)
		if err != nil {
			return nil, false, fmt.Errorf("read node %d after its heartbeat: %w", r.NodeID, err)
		}
		return n, false, nil
	}
	node, err := c.ComputeNode.Query().Where(computenode.ID(r.NodeID)).
		Select(computenode.FieldStatus, computenode.FieldStatusReason, computenode.FieldSchedulable,
			computenode.FieldAutoCordon, computenode.FieldCPUCapacity, computenode.FieldMemoryCapacityMB,
			computenode.FieldDiskCapacityGB, computenode.FieldAgentVersion).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, false, apierr.NotFound("compute node %d not found", r.NodeID)
	}
	if err != nil {
		return nil, false, err
	}

	changed := false
	u := c.ComputeNode.UpdateOneID(r.NodeID).SetLastHeartbeatAt(r.At)
	if r.CPUCapacity != nil && *r.CPUCapacity != node.CPUCapacity {
		u.SetCPUCapacity(*r.CPUCapacity)
		changed = true
	}
	if r.MemoryCapacityMB != nil && int64(*r.MemoryCapacityMB) != node.MemoryCapacityMB {
		u.SetMemoryCapacityMB(int64(*r.MemoryCapacityMB))
		changed = true
	}
	if r.DiskCapacityGB != nil && int64(*r.DiskCapacityGB) != node.DiskCapacityGB {
		u.SetDiskCapacityGB(int64(*r.DiskCapacityGB))
		changed = true
	}
	if r.AgentVersion != nil && *r.AgentVersion != node.AgentVersion {
		u.SetAgentVersion(*r.AgentVersion)
		changed = true
	}
	msg := ""
	if r.Message != nil {
		msg = strings.TrimSpace(*r.Message)
	}
	status, reason := computenode.StatusReady, ""
	if !r.Healthy {
		status, reason = computenode.StatusNotReady, msg
		if reason == "" {
			reason = "the node agent reports the node unhealthy"
		}
	}
	if r.RequestCordon != nil && *r.RequestCordon {
		switch {
		case !node.AutoCordon:
			reason = joinReason(reason, "the node asks to be cordoned; auto-cordon is off, so an operator must cordon it")
		case node.Schedulable:
			cr := msg
			if cr == "" {
				cr = DefaultCordonReason
			}
			u.SetSchedulable(false).SetCordonReason(truncate.String(cr, maxReason))
			changed = true
		}
	}
	if status != node.Status {
		u.SetStatus(status)
		changed = true
	}
	if reason = truncate.String(reason, maxReason); reason != node.StatusReason {
		if reason == "" {
			u.ClearStatusReason()
		} else {
			u.SetStatusReason(reason)
		}
		changed = true
	}
	n, err := u.Save(ctx)
	if ent.IsNotFound(err) {
		return nil, false, apierr.NotFound("compute node %d not found", r.NodeID)
	}
	if err != nil {
		return nil, false, fmt.Errorf("record heartbeat of node %d: %w", r.NodeID, err)
	}
	if status == computenode.StatusReady && node.Status != computenode.StatusReady {
		// Back from NOT_READY or DOWN: a SUCCESS for the node monitor's check, so the rules
		// resolve what its silence raised.
		_, err := alerting.Record(ctx, c, c.Event.Create().SetCheckName(alerting.NodeHeartbeatCheck).
			SetStatus(event.StatusSuccess).SetSource("heartbeat").SetNodeID(r.NodeID).
			SetOutput(fmt.Sprintf("node is READY again (was %s)", node.Status)).SetFirstSeenAt(r.At).SetLastSeenAt(r.At))
		if err != nil {
			return nil, false, err
		}
	}
	return n, changed, nil
}

// routine records r as a routine heartbeat — one that changes nothing but
// last_heartbeat_at — if it is one, in a single statement:
//
//	UPDATE compute_nodes SET updated_at = $1, last_heartbeat_at = $2
//	WHERE id = $3 AND status = 'READY' AND (status_reason IS NULL OR status_reason = '')
//	  AND cpu_capacity = $4 AND ... AND <the privacy policy's own-node filter>
//	RETURNING set_config('synchronous_commit', 'off', true)
//
// and reports whether it matched the node. The conditions are those under which the full
// path of Apply would set nothing but the time: a healthy report (READY, no reason), no cordon
// request, and every capacity and the agent version reported equal to the recorded ones. The
// UPDATE goes through ent, so the privacy policy narrows it to the nodes the viewer may write
// (an agent's own node): another node's id matches nothing and falls to the full path, which
// answers NOT_FOUND as before.
//
// Durability: on PostgreSQL the RETURNING clause, evaluated only for the row actually updated,
// turns synchronous_commit off for the rest of this transaction (set_config with is_local is
// SET LOCAL), so its COMMIT does not wait for the WAL to reach the disk. A crash can then
// lose the last fraction of a second (at most about three times wal_writer_delay, 200 ms by
// default) of committed heartbeat times, never anything else: such a transaction wrote only
// last_heartbeat_at and updated_at, the database stays consistent, and a lost time is
// replaced by the node's next heartbeat 10 s later — far inside the node monitor's 50 s grace
// before NOT_READY. Transactions that change anything else (a status, a capacity, a cordon, an
// audit row) never reach this clause and commit durably.
func routine(ctx context.Context, c *ent.Client, r Report) (bool, error) {
	if !r.Healthy || (r.RequestCordon != nil && *r.RequestCordon) {
		return false, nil
	}
	where := []predicate.ComputeNode{
		computenode.ID(r.NodeID),
		computenode.StatusEQ(computenode.StatusReady),
		computenode.Or(computenode.StatusReasonIsNil(), computenode.StatusReasonEQ("")),
	}
	if r.CPUCapacity != nil {
		where = append(where, computenode.CPUCapacity(*r.CPUCapacity))
	}
	if r.MemoryCapacityMB != nil {
		where = append(where, computenode.MemoryCapacityMB(int64(*r.MemoryCapacityMB)))
	}
	if r.DiskCapacityGB != nil {
		where = append(where, computenode.DiskCapacityGB(int64(*r.DiskCapacityGB)))
	}
	if r.AgentVersion != nil {
		if *r.AgentVersion == "" {
			where = append(where, computenode.Or(computenode.AgentVersionIsNil(), computenode.AgentVersion("")))
		} else {
			where = append(where, computenode.AgentVersion(*r.AgentVersion))
		}
	}
	n, err := c.ComputeNode.Update().Where(where...).SetLastHeartbeatAt(r.At).
		Modify(func(u *sql.UpdateBuilder) {
			if u.Dialect() == dialect.Postgres {
				u.Returning("set_config('synchronous_commit', 'off', true)")
			}
		}).
		Save(ctx)
	if err != nil {
		return false, err
	}
	return n == 1, nil
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
