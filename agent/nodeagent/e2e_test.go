package nodeagent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/virtflow/virtflow/agent/hypervisor"
	"github.com/virtflow/virtflow/agent/nodeagent"
	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/demo/fleet"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/internal/app"
	"github.com/virtflow/virtflow/internal/platform/config"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
	"github.com/virtflow/virtflow/internal/testkit/testlog"
)

// stack is a server and a standalone worker (app.RunServer, app.RunWorker) on PostgreSQL and
// Redis with a one-node site, and libvirtd's test driver for the agent.
type stack struct {
	env    *gqltest.Env
	site   *placementtest.Site
	flavor *ent.Flavor
	node   int
	hv     *hypervisor.Libvirt
	base   string // the GraphQL URL
	runCtx context.Context
	log    *slog.Logger
}

// startStack starts the stack; notReadyAfter, when not zero, is the node monitor's threshold.
func startStack(t *testing.T, notReadyAfter time.Duration) *stack {
	t.Helper()
	return startStackOn(t, notReadyAfter, "127.0.0.1:0", libvirtTestDriver(t))
}

// startStackOn is startStack with the server listening on addr and hv for the agent.
func startStackOn(t *testing.T, notReadyAfter time.Duration, addr string, hv *hypervisor.Libvirt) *stack {
	t.Helper()
	return startStackWith(t, notReadyAfter, addr, hv, nil)
}

// startStackWith is startStackOn with tune changing the server's and worker's config.
func startStackWith(t *testing.T, notReadyAfter time.Duration, addr string, hv *hypervisor.Libvirt, tune func(*config.Config)) *stack {
	t.Helper()
	dsn := testdb.DSN(t)
	env := gqltest.Postgres(t, dsn) // migrates; its client writes the fixtures
	ctx := gqltest.System()
	site, err := placementtest.Build(ctx, env.Client, placementtest.Spec{Racks: 1, HostsPerRack: 1, PowerZones: 1,
		NetworkZones: 1, CPU: 16, MemoryMB: 65536, DiskGB: 500, Cores: 8})
	if err != nil {
		t.Fatal(err)
	}
	fl, err := site.Flavor(ctx, 1, 128, 0, false)
	if err != nil {
		t.Fatal(err)
	}

	// The admin secret is gqltest's: another secret would retire it (and gqltest the other).
	// A Redis of the test's own: the shared one keeps other packages' queues and, across
	// runs, stale task ids that a fresh database's outbox ids collide with (the relay then
	// takes its task for enqueued already, and it never runs).
	cfg := config.Config{Addr: addr, DatabaseURL: dsn, AdminToken: gqltest.AdminToken, ShutdownGrace: 5 * time.Second,
		RedisURL: testdb.PrivateRedis(t), NodeNotReadyAfter: notReadyAfter, ImageDir: t.TempDir(),
		EgressAllow: "127.0.0.1/32"} // image sources in these tests are local HTTP servers
	if notReadyAfter > 0 {
		cfg.NodeDownAfter = 100 * notReadyAfter
	}
	if tune != nil {
		tune(&cfg)
	}
	log := testlog.OnFailure(t)
	runCtx, stop := context.WithCancel(authz.SystemContext(context.Background(), "e2e"))
	ready, serverDone, workerDone := make(chan string, 1), make(chan error, 1), make(chan error, 1)
	go func() { serverDone <- app.RunServer(runCtx, cfg, log, func(a string) { ready <- a }) }()
	go func() { workerDone <- app.RunWorker(runCtx, cfg, log) }()
	t.Cleanup(func() { stop(); <-serverDone; <-workerDone })
	st := &stack{env: env, site: site, flavor: fl, node: site.Nodes[0].ID, hv: hv, runCtx: runCtx, log: log}
	select {
	case a := <-ready:
		st.base = "http://" + a + "/query"
	case err := <-serverDone:
		t.Fatalf("server: %v", err)
	}
	return st
}

// startAgent runs the node's agent (heartbeat every second) until ctx ends.
func (st *stack) startAgent(t *testing.T, ctx context.Context) {
	t.Helper()
	tok, err := fleet.IssueAgentToken(gqltest.System(), st.env.Client, st.env.Identity, st.node)
	if err != nil {
		t.Fatal(err)
	}
	ag, err := nodeagent.New(nodeagent.Config{APIURL: st.base, Token: tok, Hypervisor: st.hv, Log: st.log,
		HeartbeatInterval: time.Second, ResyncInterval: time.Hour, RetryDelay: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = ag.Run(ctx) }()
}

// TestEndToEndOnLibvirt: a server and a standalone worker on PostgreSQL and Redis, and the
// agent on libvirtd's test driver. createVirtualMachine through GraphQL → outbox → worker →
// assignment → agent → domain running → ACTIVE, seen by a websocket subscriber of
// virtualMachineStatusChanged; then stop, start and delete, after which the domain is gone
// from libvirt.
func TestEndToEndOnLibvirt(t *testing.T) {
	st := startStack(t, 0)
	ctx, hv, base, runCtx, fl, site := gqltest.System(), st.hv, st.base, st.runCtx, st.flavor, st.site
	const admin = gqltest.AdminToken
	st.startAgent(t, runCtx)

	api := &nodeagent.Client{URL: base, Token: admin}
	statuses := subscribeVMStatus(t, runCtx, base, admin)

	var created struct{ CreateVirtualMachine struct{ ID, Status string } }
	if err := api.Do(ctx, `mutation($in: CreateVirtualMachineInput!) { createVirtualMachine(input: $in) { id status } }`,
		map[string]any{"in": map[string]any{"name": "e2e-vm", "tenantID": gqltest.ID(site.Tenant), "regionID": gqltest.ID(site.Region),
			"flavorID": gqltest.ID(fl.ID)}}, &created); err != nil {
		t.Fatal(err)
	}
	id := created.CreateVirtualMachine.ID
	vmID, _ := strconv.ParseInt(id, 10, 64)
	name := hypervisor.DomainName(vmID)
	t.Cleanup(func() { _ = hv.Undefine(context.Background(), name) })

	waitStatus := func(want string) {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case ev := <-statuses:
				if ev.ID == id && ev.Status == want {
					return
				}
				if ev.ID == id && ev.Status == "ERROR" {
					t.Fatalf("VM in ERROR waiting for %s: %s", want, ev.StatusReason)
				}
			case <-deadline:
				t.Fatalf("no %s status for VM %s from the subscription within 30 s", want, id)
			}
		}
	}
	domainState := func() hypervisor.DomainState {
		st, err := hv.State(context.Background(), name)
		if errors.Is(err, hypervisor.ErrNotFound) {
			return "absent"
		}
		return st
	}

	waitStatus("ACTIVE")
	if st := domainState(); st != hypervisor.StateRunning {
		t.Fatalf("VM ACTIVE but its domain is %s", st)
	}
	for _, step := range []struct{ mutation, status string }{{"stopVirtualMachine", "STOPPED"}, {"startVirtualMachine", "ACTIVE"}} {
		if err := api.Do(ctx, fmt.Sprintf(`mutation($id: ID!) { %s(id: $id) { id } }`, step.mutation), map[string]any{"id": id}, nil); err != nil {
			t.Fatalf("%s: %v", step.mutation, err)
		}
		waitStatus(step.status)
		want := hypervisor.StateRunning
		if step.status == "STOPPED" {
			want = hypervisor.StateShutOff
		}
		if st := domainState(); st != want {
			t.Fatalf("after %s the domain is %s, want %s", step.mutation, st, want)
		}
	}
	if err := api.Do(ctx, `mutation($id: ID!) { deleteVirtualMachine(id: $id) }`, map[string]any{"id": id}, nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the domain gone from libvirt", func() bool { return domainState() == "absent" })
}

// vmStatus is one virtualMachineStatusChanged event.
type vmStatus struct{ ID, Status, StatusReason, GuestState string }

// subscribeVMStatus subscribes to virtualMachineStatusChanged over graphql-transport-ws and
// delivers the events until ctx ends.
func subscribeVMStatus(t *testing.T, ctx context.Context, httpURL, token string) <-chan vmStatus {
	t.Helper()
	conn, _, err := websocket.Dial(ctx, "ws://"+strings.TrimPrefix(httpURL, "http://"), &websocket.DialOptions{
		Subprotocols: []string{"graphql-transport-ws"}, HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		t.Fatal(err)
	}
	type msg struct {
		ID      string          `json:"id,omitempty"`
		Type    string          `json:"type"`
		Payload json.RawMessage `json:"payload,omitempty"`
	}
	raw := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	if err := wsjson.Write(ctx, conn, msg{Type: "connection_init", Payload: raw(map[string]any{"Authorization": "Bearer " + token})}); err != nil {
		t.Fatal(err)
	}
	var ack msg
	if err := wsjson.Read(ctx, conn, &ack); err != nil || ack.Type != "connection_ack" {
		t.Fatalf("connection_init: %v %+v", err, ack)
	}
	if err := wsjson.Write(ctx, conn, msg{ID: "1", Type: "subscribe", Payload: raw(map[string]any{
		"query": `subscription { virtualMachineStatusChanged { id status statusReason guestState } }`})}); err != nil {
		t.Fatal(err)
	}
	out := make(chan vmStatus, 64)
	go func() {
		defer conn.CloseNow()
		for {
			var m msg
			if err := wsjson.Read(ctx, conn, &m); err != nil {
				return
			}
			if m.Type == "ping" {
				_ = wsjson.Write(ctx, conn, msg{Type: "pong"})
				continue
			}
			if m.Type != "next" {
				continue
			}
			var p struct {
				Data struct{ VirtualMachineStatusChanged vmStatus }
			}
			if json.Unmarshal(m.Payload, &p) == nil {
				select {
				case out <- p.Data.VirtualMachineStatusChanged:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out
}
