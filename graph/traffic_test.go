package graph_test

import (
	"net/netip"
	"strconv"
	"testing"

	"github.com/virtflow/virtflow/ent/loadbalancer"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

const nodeLoadBalancersQuery = `query($n: ID!) { nodeLoadBalancers(node: $n) {
  id vip algorithm healthCheckIntervalMs listeners { port protocol targetPort } members { vmID address } } }`

const reportLBState = `mutation($in: LoadBalancerStateInput!) { reportLoadBalancerState(input: $in) {
  id status statusReason members { vmID health reason } nodeStates { nodeID announced forwarding } } }`

// TestLoadBalancerNodeAPI: listeners are validated on create and update (a load balancer of
// only a name and a tenant stays valid); a serving node's agent reads the load balancers of
// its node and reports them, which moves the status to ACTIVE only with a report that says
// announced and forwarding; another node's agent and tenant members see nothing.
func TestLoadBalancerNodeAPI(t *testing.T) {
	env, f := newEnv(t)
	tenant := f.Tenant()
	// Only a name and a tenant (what Kubernetes clusters' API VIPs use): valid.
	f.create("LoadBalancer", map[string]any{"name": uniq("k8s-api"), "tenantID": tenant})
	for _, bad := range []map[string]any{
		{"port": 0, "protocol": "TCP", "targetPort": 80},
		{"port": 80, "protocol": "UDP", "targetPort": 80},
		{"port": 80, "protocol": "TCP", "targetPort": 70000},
	} {
		f.tryCreate("LoadBalancer", map[string]any{"name": uniq("lb"), "tenantID": tenant, "listeners": []any{bad}}).
			ExpectError(t, "VALIDATION", "listeners")
	}
	lbID := f.create("LoadBalancer", map[string]any{"name": uniq("lb"), "tenantID": tenant, "healthCheckIntervalMs": 500,
		"listeners": []any{map[string]any{"port": 80, "protocol": "HTTP", "targetPort": 8080}}})
	f.tryUpdate("LoadBalancer", lbID, map[string]any{"listeners": []any{
		map[string]any{"port": 80, "protocol": "TCP", "targetPort": 8080}, map[string]any{"port": 80, "protocol": "TCP", "targetPort": 81}}}).
		ExpectError(t, "VALIDATION", "listeners")

	node, other := f.ComputeNode(), f.ComputeNode()
	ctx := gqltest.System()
	id, _ := strconv.Atoi(lbID)
	nid, _ := strconv.Atoi(node)
	netID, _ := strconv.Atoi(f.Network(map[string]any{"cidr": "10.250.0.0/24"}))
	env.Client.LoadBalancer.UpdateOneID(id).AddNodeIDs(nid).ExecX(ctx)
	env.Client.IPAddress.Create().SetAddress("10.250.0.10").SetNetworkID(netID).SetLoadBalancerID(id).ExecX(ctx)

	own := env.As(agentToken(t, env, node))
	var lbs struct {
		NodeLoadBalancers []struct {
			ID, Vip, Algorithm    string
			HealthCheckIntervalMs int
			Listeners             []struct {
				Port, TargetPort int
				Protocol         string
			}
		}
	}
	own.MustDo(t, nodeLoadBalancersQuery, map[string]any{"n": node}, &lbs)
	if len(lbs.NodeLoadBalancers) != 1 || lbs.NodeLoadBalancers[0].ID != lbID || lbs.NodeLoadBalancers[0].Vip != "10.250.0.10" ||
		lbs.NodeLoadBalancers[0].HealthCheckIntervalMs != 500 || lbs.NodeLoadBalancers[0].Listeners[0].Protocol != "HTTP" {
		t.Fatalf("node's load balancers: %+v", lbs)
	}
	if _, err := netip.ParseAddr(lbs.NodeLoadBalancers[0].Vip); err != nil {
		t.Fatal(err)
	}
	in := func(nodeID string, up bool) map[string]any {
		return map[string]any{"in": map[string]any{"loadBalancerID": lbID, "nodeID": nodeID, "announced": up, "forwarding": up,
			"members": []any{}}}
	}
	otherAgent := env.As(agentToken(t, env, other))
	otherAgent.Do(t, nodeLoadBalancersQuery, map[string]any{"n": node}).ExpectError(t, "NOT_FOUND", "")
	otherAgent.Do(t, reportLBState, in(node, true)).ExpectError(t, "NOT_FOUND", "")
	otherAgent.Do(t, reportLBState, in(other, true)).ExpectError(t, "NOT_FOUND", "") // not one of its nodes
	tid, _ := strconv.Atoi(tenant)
	env.As(memberToken(t, env, tid)).Do(t, reportLBState, in(node, true)).ExpectError(t, "NOT_FOUND", "")

	var out struct {
		ReportLoadBalancerState struct {
			Status, StatusReason string
			NodeStates           []struct{ Announced, Forwarding bool }
		}
	}
	own.MustDo(t, reportLBState, in(node, false), &out)
	if out.ReportLoadBalancerState.Status != "NOT_REALIZED" {
		t.Fatalf("a node that does not forward: %+v", out.ReportLoadBalancerState)
	}
	own.MustDo(t, reportLBState, in(node, true), &out)
	if out.ReportLoadBalancerState.Status != "ACTIVE" || len(out.ReportLoadBalancerState.NodeStates) != 1 ||
		!out.ReportLoadBalancerState.NodeStates[0].Forwarding {
		t.Fatalf("a node that announces and forwards: %+v", out.ReportLoadBalancerState)
	}

	// The serving nodes are the load balancer's own state: its tenant deletes it with them
	// (once the operator released its VIP, an address of a network that is not the tenant's).
	env.MustDo(t, `mutation($id: ID!) { updateLoadBalancer(id: $id, input: {clearVip: true}) { id } }`, map[string]any{"id": lbID}, nil)
	// Another tenant's member neither deletes it nor, through the rollback, detaches its node.
	otherTenant, _ := strconv.Atoi(f.Tenant())
	env.As(memberToken(t, env, otherTenant)).Do(t, `mutation($id: ID!) { deleteLoadBalancer(id: $id) }`, map[string]any{"id": lbID}).
		ExpectError(t, "NOT_FOUND", "")
	if n := env.Client.LoadBalancer.Query().Where(loadbalancer.ID(id)).QueryNodes().CountX(ctx); n != 1 {
		t.Fatalf("a refused delete left the load balancer %d serving nodes, want 1", n)
	}
	env.As(memberToken(t, env, tid)).MustDo(t, `mutation($id: ID!) { deleteLoadBalancer(id: $id) }`, map[string]any{"id": lbID}, nil)
	if env.Client.LoadBalancer.Query().Where(loadbalancer.ID(id)).ExistX(ctx) { // other tests' load balancers stay
		t.Errorf("load balancer %d is still there after its delete", id)
	}
}
