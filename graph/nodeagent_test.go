package graph_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/virtflow/virtflow/demo/fleet"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

const reportNodeStatus = `mutation($in: NodeStatusInput!) { reportNodeStatus(input: $in) {
  id status statusReason schedulable cordonReason cpuCapacity memoryCapacityMB diskCapacityGB agentVersion lastHeartbeatAt } }`

// reportedNode is what reportNodeStatus returns.
type reportedNode struct {
	ID               string
	Status           string
	StatusReason     *string
	Schedulable      bool
	CordonReason     *string
	CPUCapacity      int
	MemoryCapacityMB int
	DiskCapacityGB   int
	AgentVersion     *string
	LastHeartbeatAt  *string
}

// agentToken issues the agent token of node id (a string id from the fixtures).
func agentToken(t testing.TB, env *gqltest.Env, id string) string {
	t.Helper()
	n, _ := strconv.Atoi(id)
	tok, err := fleet.IssueAgentToken(gqltest.System(), env.Client, env.Identity, n)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestReportNodeStatusAuthorization: the node's own agent and admins may report a node's
// status; the agent of another node does not see it, and tenant members may not.
func TestReportNodeStatusAuthorization(t *testing.T) {
	env, f := newEnv(t)
	node, other := f.ComputeNode(), f.ComputeNode()
	own := agentToken(t, env, node)
	in := map[string]any{"in": map[string]any{"nodeID": node, "healthy": true, "cpuCapacity": 32}}

	var out struct{ ReportNodeStatus reportedNode }
	env.As(own).MustDo(t, reportNodeStatus, in, &out)
	if out.ReportNodeStatus.Status != "READY" || out.ReportNodeStatus.CPUCapacity != 32 {
		t.Fatalf("own agent's report: got %+v", out.ReportNodeStatus)
	}
	env.MustDo(t, reportNodeStatus, in, &out) // admin

	otherAgent := agentToken(t, env, other)
	env.As(otherAgent).Do(t, reportNodeStatus, in).ExpectError(t, "NOT_FOUND", "")

	tenant, _ := strconv.Atoi(f.Tenant())
	env.As(memberToken(t, env, tenant)).Do(t, reportNodeStatus, in).ExpectError(t, "FORBIDDEN", "")

	// An agent token is no way into the rest of the graph: it cannot change its node's
	// other fields through the operators' mutation either.
	env.As(own).Do(t, `mutation($id: ID!) { updateComputeNode(id: $id, input: {name: "x"}) { id } }`,
		map[string]any{"id": other}).ExpectError(t, "NOT_FOUND", "")
}

// TestReportNodeStatusEffects: a heartbeat records capacity, version and time and marks the
// node READY; an unhealthy one NOT_READY with the reason; a cordon request cordons a node
// with auto-cordon and is only recorded on one without.
func TestReportNodeStatusEffects(t *testing.T) {
	env, f := newEnv(t)
	node := f.ComputeNode()
	agent := env.As(agentToken(t, env, node))
	var out struct{ ReportNodeStatus reportedNode }

	agent.MustDo(t, reportNodeStatus, map[string]any{"in": map[string]any{"nodeID": node, "healthy": true,
		"cpuCapacity": 48, "memoryCapacityMB": 196608, "diskCapacityGB": 2000, "agentVersion": "0.6.0"}}, &out)
	got := out.ReportNodeStatus
	if got.Status != "READY" || str(got.StatusReason) != "" || got.CPUCapacity != 48 || got.MemoryCapacityMB != 196608 ||
		got.DiskCapacityGB != 2000 || got.AgentVersion == nil || *got.AgentVersion != "0.6.0" || got.LastHeartbeatAt == nil {
		t.Fatalf("healthy heartbeat: got %+v", got)
	}
	first := *got.LastHeartbeatAt

	agent.MustDo(t, reportNodeStatus, map[string]any{"in": map[string]any{"nodeID": node, "healthy": false,
		"message": "libvirtd not answering"}}, &out)
	got = out.ReportNodeStatus
	if got.Status != "NOT_READY" || str(got.StatusReason) != "libvirtd not answering" || got.CPUCapacity != 48 {
		t.Fatalf("unhealthy heartbeat: got %+v", got)
	}
	if *got.LastHeartbeatAt == first {
		t.Errorf("lastHeartbeatAt not updated: %s", first)
	}

	// auto-cordon off: the request is recorded, the node stays schedulable.
	agent.MustDo(t, reportNodeStatus, map[string]any{"in": map[string]any{"nodeID": node, "healthy": true,
		"requestCordon": true, "message": "ECC errors"}}, &out)
	got = out.ReportNodeStatus
	if !got.Schedulable || got.Status != "READY" || str(got.StatusReason) == "" {
		t.Fatalf("cordon request without auto-cordon: got %+v", got)
	}

	id, _ := strconv.Atoi(node)
	env.Client.ComputeNode.UpdateOneID(id).SetAutoCordon(true).ExecX(gqltest.System())
	agent.MustDo(t, reportNodeStatus, map[string]any{"in": map[string]any{"nodeID": node, "healthy": true,
		"requestCordon": true, "message": "ECC errors"}}, &out)
	got = out.ReportNodeStatus
	if got.Schedulable || str(got.CordonReason) != "ECC errors" {
		t.Fatalf("cordon request with auto-cordon: got %+v", got)
	}
	// A later healthy heartbeat does not lift the cordon: only uncordonNode does.
	agent.MustDo(t, reportNodeStatus, map[string]any{"in": map[string]any{"nodeID": node, "healthy": true}}, &out)
	if out.ReportNodeStatus.Schedulable {
		t.Fatal("a heartbeat lifted the cordon")
	}
	n := env.Client.ComputeNode.GetX(gqltest.System(), id)
	if n.Status != computenode.StatusReady || n.LastHeartbeatAt == nil {
		t.Fatalf("stored node: %+v", n)
	}

	agent.Do(t, reportNodeStatus, map[string]any{"in": map[string]any{"nodeID": node, "healthy": true, "cpuCapacity": -1}}).
		ExpectError(t, "VALIDATION", "cpuCapacity")
}

// str is *p, or "" for nil.
func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// TestReportNodeStatusRoutine: a heartbeat that changes nothing but the time (the fast path
// of nodestatus.Apply: one conditional UPDATE) records the time, answers the fields asked for
// whether that is only the id or the whole node, writes no audit row, and still lets only
// the node's own agent touch the node: another node's agent repeating the very same routine
// report gets NOT_FOUND and moves nothing.
func TestReportNodeStatusRoutine(t *testing.T) {
	env, f := newEnv(t)
	node, other := f.ComputeNode(), f.ComputeNode()
	agent := env.As(agentToken(t, env, node))
	in := map[string]any{"in": map[string]any{"nodeID": node, "healthy": true,
		"cpuCapacity": 48, "memoryCapacityMB": 196608, "agentVersion": "0.6.0"}}
	var out struct{ ReportNodeStatus reportedNode }
	agent.MustDo(t, reportNodeStatus, in, &out) // not routine: status and capacity change
	id, _ := strconv.Atoi(node)
	ctx := gqltest.System()
	heartbeat := func() time.Time {
		t.Helper()
		n := env.Client.ComputeNode.GetX(ctx, id)
		if n.LastHeartbeatAt == nil {
			t.Fatal("no heartbeat recorded")
		}
		return *n.LastHeartbeatAt
	}
	audits := func() int { return env.Client.AuditLog.Query().CountX(ctx) }
	before, auditsBefore := heartbeat(), audits()

	const idOnly = `mutation($in: NodeStatusInput!) { reportNodeStatus(input: $in) { id __typename } }`
	var short struct {
		ReportNodeStatus struct {
			ID       string `json:"id"`
			Typename string `json:"__typename"`
		}
	}
	agent.MustDo(t, idOnly, in, &short)
	if short.ReportNodeStatus.ID != node || short.ReportNodeStatus.Typename != "ComputeNode" {
		t.Fatalf("routine heartbeat asking for the id: got %+v", short.ReportNodeStatus)
	}
	if after := heartbeat(); !after.After(before) {
		t.Fatalf("routine heartbeat: last_heartbeat_at %v, want after %v", after, before)
	}
	before = heartbeat()
	agent.MustDo(t, reportNodeStatus, in, &out)
	got := out.ReportNodeStatus
	if got.ID != node || got.Status != "READY" || got.CPUCapacity != 48 || got.MemoryCapacityMB != 196608 ||
		str(got.AgentVersion) != "0.6.0" || got.LastHeartbeatAt == nil {
		t.Fatalf("routine heartbeat asking for the node: got %+v", got)
	}
	if after := heartbeat(); !after.After(before) {
		t.Fatalf("routine heartbeat: last_heartbeat_at %v, want after %v", after, before)
	}
	if n := audits() - auditsBefore; n != 0 {
		t.Fatalf("routine heartbeats wrote %d audit rows, want 0", n)
	}

	before = heartbeat()
	otherAgent := env.As(agentToken(t, env, other))
	otherAgent.Do(t, idOnly, in).ExpectError(t, "NOT_FOUND", "")
	otherAgent.Do(t, reportNodeStatus, in).ExpectError(t, "NOT_FOUND", "")
	if after := heartbeat(); !after.Equal(before) {
		t.Fatalf("another node's agent moved last_heartbeat_at from %v to %v", before, after)
	}

	// A report that changes something takes the full path: recorded and audited.
	in["in"].(map[string]any)["cpuCapacity"] = 40
	agent.MustDo(t, idOnly, in, &short)
	if n := env.Client.ComputeNode.GetX(ctx, id); n.CPUCapacity != 40 {
		t.Fatalf("capacity change: cpu_capacity %d, want 40", n.CPUCapacity)
	}
	if n := audits() - auditsBefore; n != 1 {
		t.Fatalf("a capacity change wrote %d audit rows, want 1", n)
	}
}
