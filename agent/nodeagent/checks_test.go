package nodeagent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/virtflow/virtflow/agent/nodeagent"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/check"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/event"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/poll"
)

func script(t *testing.T, body string) string {
	p := filepath.Join(t.TempDir(), "check.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRunCommandNagios: exit codes 0/1/2/3 become SUCCESS/WARNING/CRITICAL/UNKNOWN (as a
// WARNING), the output is the first line, and a check past its timeout is CRITICAL.
func TestRunCommandNagios(t *testing.T) {
	tests := []struct {
		body   string
		status nodeagent.EventStatus
		output string
	}{
		{"echo 'OK - fine'; exit 0", nodeagent.EventStatusSuccess, "OK - fine"},
		{"echo 'DISK WARNING - 91%'; echo second line; exit 1", nodeagent.EventStatusWarning, "DISK WARNING - 91%"},
		{"echo 'DISK CRITICAL - 99%'; exit 2", nodeagent.EventStatusCritical, "DISK CRITICAL - 99%"},
		{"echo 'no idea'; exit 3", nodeagent.EventStatusWarning, "UNKNOWN: no idea"},
		{"sleep 5", nodeagent.EventStatusCritical, "CRITICAL: timed out after 200ms"},
	}
	for _, tt := range tests {
		r := nodeagent.RunCommand(context.Background(), script(t, tt.body), 200*time.Millisecond)
		if r.Status != tt.status || r.Output != tt.output {
			t.Errorf("%q: %s %q, want %s %q", tt.body, r.Status, r.Output, tt.status, tt.output)
		}
	}
	if r := nodeagent.RunCommand(context.Background(), "/nonexistent/check", time.Second); r.Status != nodeagent.EventStatusCritical {
		t.Errorf("a missing command: %s %q", r.Status, r.Output)
	}
}

// TestNICLinks reads a sysfs of its own: physical links not up are a WARNING naming them,
// virtual interfaces (no device link) are ignored.
func TestNICLinks(t *testing.T) {
	sys := t.TempDir()
	nic := func(name, state string, physical bool) {
		d := filepath.Join(sys, name)
		_ = os.MkdirAll(d, 0o755)
		_ = os.WriteFile(filepath.Join(d, "operstate"), []byte(state+"\n"), 0o644)
		if physical {
			_ = os.MkdirAll(filepath.Join(d, "device"), 0o755)
		}
	}
	nic("eno1", "up", true)
	nic("br0", "down", false)
	if r := nodeagent.NICLinks(sys); r.Status != nodeagent.EventStatusSuccess {
		t.Errorf("all up: %s %q", r.Status, r.Output)
	}
	nic("eno2", "down", true)
	if r := nodeagent.NICLinks(sys); r.Status != nodeagent.EventStatusWarning || r.Output != "WARNING: link not up: eno2 down" {
		t.Errorf("one down: %s %q", r.Status, r.Output)
	}
}

// TestAgentRunsChecks: checks assigned to the agent's node (a command, by node) and to its
// cluster (a built-in) are run by the agent and reported as events of the node linked to
// their check; an agent token may not report events of another node.
func TestAgentRunsChecks(t *testing.T) {
	w := newWorld(t)
	ctx := gqltest.System()
	c := w.env.Client
	cl := c.ComputeNode.QueryCluster(w.node).OnlyX(ctx)
	disk := c.Check.Create().SetName(uniq("disk")).SetCommand(script(t, "echo 'DISK CRITICAL - 99%'; exit 2")).
		SetIntervalSeconds(5).AddNodeIDs(w.node.ID).SaveX(ctx)
	c.Check.Create().SetName(uniq("libvirtd")).SetBuiltin(check.BuiltinLibvirtdReachable).AddClusterIDs(cl.ID).SaveX(ctx)
	c.Check.Create().SetName(uniq("elsewhere")).SetCommand("/bin/true").SetLabelSelector(map[string]string{"gpu": "a100"}).SaveX(ctx)

	ag, err := nodeagent.New(nodeagent.Config{APIURL: w.url, Token: w.token, NodeID: strconv.Itoa(w.node.ID),
		Hypervisor: mustSim(t), Log: quiet(), NoSubscription: true, CheckTick: 50 * time.Millisecond,
		HeartbeatInterval: time.Hour, ResyncInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = ag.Run(runCtx) }()
	defer func() { cancel(); <-done }()

	var evs []*ent.Event
	poll.Until(t, 20*time.Second, func() error {
		// The agent's check results (the node monitor files node-heartbeat on its own), of
		// this test's node only: the package's database keeps earlier runs' (go test -count).
		evs = c.Event.Query().Where(event.HasNodeWith(computenode.ID(w.node.ID)), event.CheckNameNEQ("node-heartbeat")).
			WithCheck().AllX(ctx)
		if len(evs) < 2 {
			return fmt.Errorf("%d events", len(evs))
		}
		return nil
	})
	got := map[string]event.Status{}
	for _, e := range evs {
		got[e.CheckName] = e.Status
		if e.Edges.Check == nil {
			t.Errorf("event %s not linked to its check", e.CheckName)
		}
	}
	if got[disk.Name] != event.StatusCritical || len(got) != 2 {
		t.Errorf("events %v, want the disk check CRITICAL and libvirtd", got)
	}
	other := newWorldNode(t, w)
	r := w.env.As(w.token).Do(t, `mutation($n: ID!) { reportEvents(input: [{nodeID: $n, checkName: "x", status: WARNING}]) { id } }`,
		map[string]any{"n": strconv.Itoa(other)})
	if len(r.Errors) == 0 || r.Errors[0].Code() != "FORBIDDEN" {
		t.Errorf("an agent reported for another node: %s", r.Data)
	}
}
