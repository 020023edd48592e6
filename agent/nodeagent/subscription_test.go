package nodeagent_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/virtflow/virtflow/agent/hypervisor"
	"github.com/virtflow/virtflow/agent/nodeagent"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// TestAgentFollowsSubscription: with a resync interval far too long to matter, an assignment
// created after the agent started is realized all the same, through the assignmentChanged
// subscription.
func TestAgentFollowsSubscription(t *testing.T) {
	w := newWorld(t)
	sim := mustSim(t)
	var got reports
	ag, err := nodeagent.New(nodeagent.Config{APIURL: w.url, Token: w.token, Hypervisor: sim, Log: quiet(),
		OnReport: got.add, HeartbeatInterval: time.Hour, ResyncInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	defer stop()
	go func() { _ = ag.Run(runCtx) }()
	// The first resync (at start) has nothing to do; wait until the subscription is up,
	// which is when the agent reports its node (the heartbeat at start) and has subscribed.
	eventually(t, "the first heartbeat", func() bool {
		return w.env.Client.ComputeNode.GetX(gqltest.System(), w.node.ID).LastHeartbeatAt != nil
	})
	vm, a := w.vmFix(t, assignment.DesiredStateRunning)
	// The assignment may have been created before the subscription was registered; touching
	// it again after a moment is a second change the subscription must deliver.
	// The poker ends before the test does (the database closes in its cleanup).
	poked := make(chan struct{})
	defer func() { stop(); <-poked }()
	go func() {
		defer close(poked)
		for i := 0; i < 50; i++ {
			select {
			case <-runCtx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			if _, ok := got.last(a.ID); ok {
				return
			}
			if err := w.env.Client.Assignment.UpdateOneID(a.ID).SetStatusReason(fmt.Sprint("poke ", i)).Exec(gqltest.System()); err != nil {
				t.Errorf("poke the assignment: %v", err)
				return
			}
		}
	}()
	eventually(t, "the domain running through the subscription", func() bool {
		st, err := sim.State(context.Background(), hypervisor.DomainName(int64(vm.ID)))
		return err == nil && st == hypervisor.StateRunning
	})
}
