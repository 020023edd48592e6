package nodeagent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/virtflow/virtflow/agent/hypervisor"
	"github.com/virtflow/virtflow/agent/nodeagent"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/event"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// TestAgentReportsFlappingDomain: against the real API and libvirt's test driver, a domain
// the agent has to start again and again for an assignment it already applied (here
// something powers it off behind the agent's back, as a second assignment of the VM did in
// issue 24) is flapping after FlapLimit restarts within FlapWindow: the agent reports the
// assignment FAILED with a reason naming the flapping, raises a WARNING event
// (domain-flapping, labelled with the VM) and then leaves the domain alone instead of
// starting it again.
func TestAgentReportsFlappingDomain(t *testing.T) {
	w := newWorld(t)
	hv := libvirtTestDriver(t)
	ctx, c := gqltest.System(), w.env.Client
	vm, a := w.vmFix(t, assignment.DesiredStateRunning)
	name := hypervisor.DomainName(int64(vm.ID))
	t.Cleanup(func() { _ = hv.Undefine(context.Background(), name) })

	ag, err := nodeagent.New(nodeagent.Config{APIURL: w.url, Token: w.token, Hypervisor: hv, Log: quiet(), NoChecks: true,
		HeartbeatInterval: time.Second, ResyncInterval: 100 * time.Millisecond, FlapLimit: 3, FlapWindow: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ag.Run(runCtx) }()
	defer func() { stop(); <-done }()

	running := func() bool {
		st, err := hv.State(context.Background(), name)
		return err == nil && st == hypervisor.StateRunning
	}
	applied := func() bool {
		x := c.Assignment.GetX(ctx, a.ID)
		return x.Status == assignment.StatusApplied && x.ObservedState == "running"
	}
	// Started once for the new assignment (not counted), then powered off three times.
	for i := range 3 {
		eventually(t, "the domain running and its assignment APPLIED", func() bool { return running() && applied() })
		if err := hv.Stop(context.Background(), name); err != nil {
			t.Fatalf("power off %d: %v", i, err)
		}
		if i < 2 {
			eventually(t, "the agent starting it again", running)
		}
	}
	eventually(t, "the assignment FAILED as flapping", func() bool {
		x := c.Assignment.GetX(ctx, a.ID)
		return x.Status == assignment.StatusFailed && strings.Contains(x.StatusReason, "flapping")
	})
	eventually(t, "a WARNING domain-flapping event of the node", func() bool {
		evs := c.Event.Query().Where(event.CheckName("domain-flapping"), event.StatusEQ(event.StatusWarning),
			event.HasNodeWith(computenode.ID(w.node.ID))).AllX(ctx)
		return len(evs) == 1 && evs[0].Labels["domain"] == name && strings.Contains(evs[0].Output, "flapping")
	})
	// Backed off: powered off once more, it is left alone over many resyncs.
	if running() {
		if err := hv.Stop(context.Background(), name); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Second)
	if running() {
		t.Errorf("the agent started the flapping domain again during its back-off")
	}
}
