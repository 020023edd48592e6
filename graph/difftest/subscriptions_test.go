package difftest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/regionservice"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/gateway/livestatus"
	"github.com/virtflow/virtflow/graph"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// live serves env over a real HTTP server with a live-status hub: the ent client publishes
// status changes to a Redis channel of this env's own, which the hub delivers to
// subscriptions.
type live struct {
	env *gqltest.Env
	hub *livestatus.Hub
	url string
}

func newLive(t *testing.T, env *gqltest.Env, opts graph.Options) *live {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	channel := fmt.Sprintf("virtflow:live:difftest:%d", time.Now().UnixNano())
	livestatus.Install(env.Client, env.Identity.Redis, log).Channel = channel
	hub := livestatus.NewHub(env.Identity.Redis, log)
	hub.Channel = channel
	if err := hub.Start(ctx); err != nil {
		t.Fatal(err)
	}
	opts.Live = hub
	srv := httptest.NewServer(gqltest.NewHandler(env.DB, env.Identity, opts))
	t.Cleanup(srv.Close)
	return &live{env: env, hub: hub, url: srv.URL}
}

type wsMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// subscribe opens a graphql-transport-ws connection to l as the admin and starts op.
func (l *live) subscribe(t *testing.T, op operation, vars map[string]any) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(l.url, "http")+"/query",
		&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close(websocket.StatusNormalClosure, "") })
	init, _ := json.Marshal(map[string]any{"Authorization": "Bearer " + gqltest.AdminToken})
	if err := wsjson.Write(ctx, conn, wsMessage{Type: "connection_init", Payload: init}); err != nil {
		t.Fatal(err)
	}
	if m := read(ctx, t, conn); m.Type != "connection_ack" {
		t.Fatalf("connection_init answered %s %s", m.Type, m.Payload)
	}
	payload, _ := json.Marshal(map[string]any{"query": op.Text, "operationName": op.Def.Name, "variables": vars})
	if err := wsjson.Write(ctx, conn, wsMessage{ID: "1", Type: "subscribe", Payload: payload}); err != nil {
		t.Fatal(err)
	}
	return conn
}

// read returns the next message other than a ping, or one of type "timeout" when ctx ends.
func read(ctx context.Context, t *testing.T, conn *websocket.Conn) wsMessage {
	t.Helper()
	for {
		var m wsMessage
		if err := wsjson.Read(ctx, conn, &m); err != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return wsMessage{Type: "timeout"}
			}
			t.Fatalf("websocket read: %v", err)
		}
		if m.Type == "ping" {
			_ = wsjson.Write(ctx, conn, wsMessage{Type: "pong"})
			continue
		}
		return m
	}
}

// touch changes the watched status fields of the first VM, compute node and region service
// and the first assignment of env's database, which publishes one event of each.
func touch(t *testing.T, env *gqltest.Env) {
	t.Helper()
	ctx := gqltest.System()
	c := env.Client
	vm := c.VirtualMachine.Query().Order(virtualmachine.ByID()).FirstX(ctx)
	c.VirtualMachine.UpdateOne(vm).SetStatusReason("difftest").ExecX(ctx)
	node := c.ComputeNode.Query().Order(computenode.ByID()).FirstX(ctx)
	c.ComputeNode.UpdateOne(node).SetStatusReason("difftest").ExecX(ctx)
	if svc, err := c.RegionService.Query().Order(regionservice.ByID()).First(ctx); err == nil {
		c.RegionService.UpdateOne(svc).SetStatusReason("difftest").ExecX(ctx)
	}
	if a, err := c.Assignment.Query().Order(assignment.ByID()).First(ctx); err == nil {
		c.Assignment.UpdateOne(a).SetGeneration(a.Generation).ExecX(ctx)
	}
}

// TestSubscriptionsAgree starts every subscription of the dashboard, the agent and apiclient
// on the rewritten and the stock executor, over the demo in two databases, makes the same
// status changes in both, and compares the first message each subscription gets (an event,
// an error, or none within the wait).
func TestSubscriptionsAgree(t *testing.T) {
	ops := operations(t)
	checkCases(t, ops)
	p := newPair(t)
	rewritten := newLive(t, p.rewritten, graph.DefaultOptions())
	stock := newLive(t, p.stock, stockOptions())
	type sub struct {
		op   operation
		vars map[string]any
		a, b *websocket.Conn
	}
	var subs []sub
	for _, op := range ops {
		if op.Kind != ast.Subscription {
			continue
		}
		vars, err := p.fx.variables(op, cases[op.Key].vars)
		if err != nil {
			t.Fatalf("%s: %v", op.Key, err)
		}
		subs = append(subs, sub{op: op, vars: vars, a: rewritten.subscribe(t, op, vars), b: stock.subscribe(t, op, vars)})
	}
	if len(subs) == 0 {
		t.Fatal("no subscription found")
	}
	// Wait until every subscription reached its hub (or failed, which leaves no subscriber:
	// the deadline below then only waits).
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && (rewritten.hub.Subscribers() < len(subs) || stock.hub.Subscribers() < len(subs)) {
		time.Sleep(20 * time.Millisecond)
	}
	touch(t, p.rewritten)
	touch(t, p.stock)
	events := 0
	for _, s := range subs {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		ma, mb := read(ctx, t, s.a), read(ctx, t, s.b)
		cancel()
		var pa, pb any
		_ = json.Unmarshal(ma.Payload, &pa)
		_ = json.Unmarshal(mb.Payload, &pb)
		a, b := []any{ma.Type, normalize("", pa)}, []any{mb.Type, normalize("", pb)}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: the executors disagree\nvariables: %v\nrewritten: %s %s\nstock: %s %s", s.op.Key, s.vars, ma.Type, ma.Payload, mb.Type, mb.Payload)
		}
		if ma.Type == "next" && !strings.Contains(string(ma.Payload), `"errors"`) {
			events++
		} else if cases[s.op.Key].ok {
			t.Errorf("%s: the case should get an event: %s %s", s.op.Key, ma.Type, ma.Payload)
		}
	}
	t.Logf("subscription: %d compared, %d of them got an event without errors", len(subs), events)
}
