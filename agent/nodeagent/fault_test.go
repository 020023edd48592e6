package nodeagent_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/virtflow/virtflow/agent/hypervisor"
	"github.com/virtflow/virtflow/agent/nodeagent"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// TestStoppedAgent is issue 6's "stop an agent" fault on the real clock: a server and a
// standalone worker (whose node monitor runs with a NOT_READY threshold of 3 s instead of
// 50 s), an agent running a VM on libvirtd's test driver. The agent stops. The monitor marks
// the node NOT_READY with a reason, and the VM is left alone: still ACTIVE, its assignment
// at the same generation and still RUNNING, its domain still running in libvirt.
func TestStoppedAgent(t *testing.T) {
	const threshold = 3 * time.Second
	st := startStack(t, threshold)
	ctx := gqltest.System()
	agentCtx, stopAgent := context.WithCancel(st.runCtx)
	defer stopAgent()
	st.startAgent(t, agentCtx)
	api := &nodeagent.Client{URL: st.base, Token: gqltest.AdminToken}

	var created struct{ CreateVirtualMachine struct{ ID string } }
	if err := api.Do(ctx, `mutation($in: CreateVirtualMachineInput!) { createVirtualMachine(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"name": "quiet-agent-vm", "tenantID": gqltest.ID(st.site.Tenant),
			"regionID": gqltest.ID(st.site.Region), "flavorID": gqltest.ID(st.flavor.ID)}}, &created); err != nil {
		t.Fatal(err)
	}
	id := created.CreateVirtualMachine.ID
	vmID, _ := strconv.ParseInt(id, 10, 64)
	domain := hypervisor.DomainName(vmID)
	t.Cleanup(func() { _ = st.hv.Undefine(context.Background(), domain) })

	type vmView struct {
		Status      string
		Assignments struct {
			Edges []struct {
				Node struct {
					Generation   int
					DesiredState string
				}
			}
		}
	}
	readVM := func() vmView {
		t.Helper()
		var out struct{ Node vmView }
		if err := api.Do(ctx, `query($id: ID!) { node(id: $id) { ... on VirtualMachine { status
			assignments { edges { node { generation desiredState } } } } } }`, map[string]any{"id": id}, &out); err != nil {
			t.Fatal(err)
		}
		return out.Node
	}
	readNode := func() (status, reason string) {
		t.Helper()
		var out struct {
			Node struct{ Status, StatusReason string }
		}
		if err := api.Do(ctx, `query($id: ID!) { node(id: $id) { ... on ComputeNode { status statusReason } } }`,
			map[string]any{"id": gqltest.ID(st.node)}, &out); err != nil {
			t.Fatal(err)
		}
		return out.Node.Status, out.Node.StatusReason
	}
	eventually(t, "the VM ACTIVE", func() bool { return readVM().Status == "ACTIVE" })
	if s, _ := readNode(); s != "READY" {
		t.Fatalf("node with a heartbeating agent is %s, want READY", s)
	}
	before := readVM()

	stopAgent()
	stopped := time.Now()
	eventually(t, "the node NOT_READY", func() bool { s, _ := readNode(); return s == "NOT_READY" })
	// The agent beat every second, so its last beat was at most 1 s before it stopped.
	if took := time.Since(stopped); took < threshold-time.Second {
		t.Fatalf("node NOT_READY %s after its agent stopped; the threshold is %s", took, threshold)
	}
	if _, reason := readNode(); !strings.Contains(reason, "no heartbeat for") {
		t.Fatalf("NOT_READY node's reason %q does not say why", reason)
	}

	// Several monitor rounds later the VM is untouched in the API and in libvirt.
	time.Sleep(threshold)
	after := readVM()
	if after.Status != "ACTIVE" || len(after.Assignments.Edges) != 1 || len(before.Assignments.Edges) != 1 ||
		after.Assignments.Edges[0].Node != before.Assignments.Edges[0].Node ||
		after.Assignments.Edges[0].Node.DesiredState != "RUNNING" {
		t.Fatalf("VM of the quiet node changed: before %+v, after %+v", before, after)
	}
	state, err := st.hv.State(context.Background(), domain)
	if errors.Is(err, hypervisor.ErrNotFound) || state != hypervisor.StateRunning {
		t.Fatalf("domain of the quiet node's VM: %s, %v; want it still running", state, err)
	}
}
