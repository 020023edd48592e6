package graph_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/identity"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/apitoken"
	"github.com/virtflow/virtflow/ent/user"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/gateway/livestatus"
	"github.com/virtflow/virtflow/graph"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/poll"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// Live status over real websockets (graphql-transport-ws), between two server replicas
// that share the package's PostgreSQL database and the test Redis: a change made through
// one reaches a subscriber of the other.

// replica is one server process: its own ent client (with the publishing hook), Redis
// client, live-status hub and HTTP server.
type replica struct {
	env     *gqltest.Env
	hub     *livestatus.Hub
	url     string
	redis   *infra.Redis
	channel string
}

// newReplica starts a replica on the package's PostgreSQL and the test Redis, publishing
// to and subscribed on channel.
func newReplica(t *testing.T, channel string) *replica {
	t.Helper()
	return openReplica(t, testdb.DSN(t), "", testdb.RedisURL(), channel)
}

// openReplica starts a replica on the database (dsn, or SQLite in dir) and Redis (url, or
// an in-process one) given.
func openReplica(t *testing.T, dsn, dir, redisURL, channel string) *replica {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	db, err := infra.OpenDatabase(ctx, dsn, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	rd, err := infra.OpenRedis(ctx, redisURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rd.Close() })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	livestatus.Install(db.Client, rd.Client, log).Channel = channel
	hub := livestatus.NewHub(rd.Client, log)
	hub.Channel = channel
	if err := hub.Start(ctx); err != nil {
		t.Fatal(err)
	}
	ids := &identity.Service{Client: db.Client, Redis: rd.Client, Log: log}
	if err := ids.EnsureAdminToken(ctx, gqltest.AdminToken); err != nil {
		t.Fatal(err)
	}
	opts := graph.DefaultOptions()
	opts.Live = hub
	h := gqltest.NewHandler(db, ids, opts)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &replica{env: &gqltest.Env{Client: db.Client, DB: db, Handler: h, Identity: ids, Token: gqltest.AdminToken},
		hub: hub, url: srv.URL, redis: rd, channel: channel}
}

// twoReplicas starts replicas A and B on a channel of the test's own.
func twoReplicas(t *testing.T) (a, b *replica) {
	channel := uniq("virtflow:live:test")
	return newReplica(t, channel), newReplica(t, channel)
}

// wsSub is one graphql-transport-ws subscription.
type wsSub struct {
	t    *testing.T
	conn *websocket.Conn
}

type wsMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// subscribe opens a websocket to r as token, subscribes with query and waits until r's hub
// has one subscriber more, so changes made from then on are delivered.
func (r *replica) subscribe(t *testing.T, token, query string, vars map[string]any) *wsSub {
	t.Helper()
	r.flush(t)
	before := r.hub.Subscribers()
	s := r.open(t, token, query, vars)
	poll.Until(t, 20*time.Second, func() error {
		if n := r.hub.Subscribers(); n <= before {
			return fmt.Errorf("the subscription has not reached the hub (%d subscribers, had %d)", n, before)
		}
		return nil
	})
	return s
}

// flush waits until r's hub has dispatched every event published so far (a marker
// published now arrives after them), so a new subscriber does not see earlier changes.
func (r *replica) flush(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	subs := r.hub.Subscribers()
	id := int(seq.Add(1))
	marker := r.hub.Subscribe(ctx, func(e livestatus.Event) bool { return e.Type == "flush" && e.ID == id })
	if err := r.redis.Client.Publish(ctx, r.channel, fmt.Sprintf(`{"type":"flush","id":%d}`, id)).Err(); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-marker; !ok {
		t.Fatal("flush marker never arrived")
	}
	cancel()
	poll.Until(t, 20*time.Second, func() error { // the marker's subscription is gone
		if n := r.hub.Subscribers(); n > subs {
			return fmt.Errorf("the flush marker's subscription is still on the hub (%d subscribers, want %d)", n, subs)
		}
		return nil
	})
}

func (s *wsSub) send(ctx context.Context, m wsMessage) {
	s.t.Helper()
	if err := wsjson.Write(ctx, s.conn, m); err != nil {
		s.t.Fatalf("websocket write: %v", err)
	}
}

func (s *wsSub) read(ctx context.Context) wsMessage {
	s.t.Helper()
	for {
		var m wsMessage
		if err := wsjson.Read(ctx, s.conn, &m); err != nil {
			s.t.Fatalf("websocket read: %v", err)
		}
		if m.Type == "ping" {
			s.send(ctx, wsMessage{Type: "pong"})
			continue
		}
		return m
	}
}

// next waits (at most 20 s) for the next event and decodes its data into out.
func (s *wsSub) next(out any) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	m := s.read(ctx)
	if m.Type != "next" {
		s.t.Fatalf("got %s %s, want next", m.Type, m.Payload)
	}
	var p struct {
		Data   json.RawMessage
		Errors []gqltest.Error
	}
	if err := json.Unmarshal(m.Payload, &p); err != nil || len(p.Errors) > 0 {
		s.t.Fatalf("event payload %s (%v)", m.Payload, err)
	}
	if err := json.Unmarshal(p.Data, out); err != nil {
		s.t.Fatalf("decode %s: %v", p.Data, err)
	}
}

// failure waits for the subscription's error and returns its code.
func (s *wsSub) failure() string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	m := s.read(ctx)
	var errs []gqltest.Error
	if m.Type == "error" {
		_ = json.Unmarshal(m.Payload, &errs)
	} else if m.Type == "next" {
		var p struct{ Errors []gqltest.Error }
		_ = json.Unmarshal(m.Payload, &p)
		errs = p.Errors
	}
	if len(errs) == 0 {
		s.t.Fatalf("got %s %s, want an error", m.Type, m.Payload)
	}
	return errs[0].Code()
}

// liveSite is a region with a tenant, a second tenant and a flavor, for VMs written
// directly (placement is not what these tests are about).
type liveSite struct {
	*placementtest.Site
	other, flavor int
}

func newLiveSite(t *testing.T, c *ent.Client) liveSite {
	t.Helper()
	ctx := gqltest.System()
	s, err := placementtest.Build(ctx, c, placementtest.Spec{Racks: 1, HostsPerRack: 2, CPU: 8, MemoryMB: 8192, DiskGB: 100, Cores: 4})
	if err != nil {
		t.Fatal(err)
	}
	f, _ := s.Flavor(ctx, 1, 512, 10, false)
	other := c.Tenant.Create().SetName(uniq("other-tenant")).SaveX(ctx)
	return liveSite{Site: s, other: other.ID, flavor: f.ID}
}

func (s liveSite) vm(t *testing.T, c *ent.Client, tenant int) *ent.VirtualMachine {
	return c.VirtualMachine.Create().SetName(uniq("live-vm")).SetTenantID(tenant).SetRegionID(s.Region).
		SetFlavorID(s.flavor).SetClusterID(s.Cluster).SetNodeID(s.Nodes[0].ID).SaveX(gqltest.System())
}

// setStatus changes a VM's status in a transaction of its own, committed or rolled back.
func setStatus(t *testing.T, c *ent.Client, id int, st virtualmachine.Status, commit bool) {
	t.Helper()
	tx, err := c.Tx(gqltest.System())
	if err != nil {
		t.Fatal(err)
	}
	tx.VirtualMachine.UpdateOneID(id).SetStatus(st).SetStatusReason(fmt.Sprintf("test set %s", st)).ExecX(gqltest.System())
	if commit {
		err = tx.Commit()
	} else {
		err = tx.Rollback()
	}
	if err != nil {
		t.Fatal(err)
	}
}

type liveVM struct {
	VirtualMachineStatusChanged struct {
		ID, Name, Status, StatusReason string
		Tenant                         struct{ ID string }
	}
}

const vmSubscription = `subscription($id: ID, $tenant: ID, $cluster: ID) {
	virtualMachineStatusChanged(id: $id, tenantID: $tenant, clusterID: $cluster) { id name status statusReason tenant { id } } }`

// TestLiveAcrossReplicas: a GraphQL mutation on replica A and a worker-style write through
// A's client reach subscribers on replica B; a rolled-back change is never delivered.
func TestLiveAcrossReplicas(t *testing.T) {
	a, b := twoReplicas(t)
	s := newLiveSite(t, a.env.Client)
	node := s.Nodes[0].ID

	nodes := b.subscribe(t, gqltest.AdminToken, `subscription($id: ID) { nodeStatusChanged(id: $id) { id schedulable cordonReason } }`,
		map[string]any{"id": gqltest.ID(node)})
	a.env.MustDo(t, cordonNode, map[string]any{"id": gqltest.ID(node), "reason": "live test"}, nil)
	var got struct {
		NodeStatusChanged struct {
			ID           string
			Schedulable  bool
			CordonReason string
		}
	}
	nodes.next(&got)
	if got.NodeStatusChanged.ID != gqltest.ID(node) || got.NodeStatusChanged.Schedulable || got.NodeStatusChanged.CordonReason != "live test" {
		t.Fatalf("node event = %+v", got.NodeStatusChanged)
	}

	vm := s.vm(t, a.env.Client, s.Tenant)
	vms := b.subscribe(t, gqltest.AdminToken, vmSubscription, map[string]any{"id": gqltest.ID(vm.ID)})
	setStatus(t, a.env.Client, vm.ID, virtualmachine.StatusError, false) // rolled back: never seen
	setStatus(t, a.env.Client, vm.ID, virtualmachine.StatusActive, true)
	var ev liveVM
	vms.next(&ev)
	if ev.VirtualMachineStatusChanged.ID != gqltest.ID(vm.ID) || ev.VirtualMachineStatusChanged.Status != "ACTIVE" {
		t.Fatalf("VM event = %+v, want %d ACTIVE (the rolled-back ERROR must not be delivered)", ev.VirtualMachineStatusChanged, vm.ID)
	}
	// Outside a transaction too.
	a.env.Client.VirtualMachine.UpdateOneID(vm.ID).SetStatus(virtualmachine.StatusStopped).ExecX(gqltest.System())
	vms.next(&ev)
	if ev.VirtualMachineStatusChanged.Status != "STOPPED" {
		t.Fatalf("VM event = %+v, want STOPPED", ev.VirtualMachineStatusChanged)
	}
	// Setting the status it already has is no change: on the raw channel, the repeated
	// STOPPED leaves nothing between the STARTING change and a marker change of another VM.
	subCtx, stop := context.WithCancel(context.Background())
	defer stop()
	raw := b.hub.Subscribe(subCtx, func(e livestatus.Event) bool { return e.Type == livestatus.VirtualMachine })
	marker := s.vm(t, a.env.Client, s.Tenant)
	for e := range raw { // the marker's creation
		if e.ID == marker.ID {
			break
		}
	}
	a.env.Client.VirtualMachine.UpdateOneID(vm.ID).SetStatus(virtualmachine.StatusStopped).ExecX(gqltest.System())
	a.env.Client.VirtualMachine.UpdateOneID(vm.ID).SetStatus(virtualmachine.StatusStarting).ExecX(gqltest.System())
	a.env.Client.VirtualMachine.UpdateOneID(marker.ID).SetStatus(virtualmachine.StatusActive).ExecX(gqltest.System())
	var order []int
	for len(order) < 2 {
		select {
		case e := <-raw:
			order = append(order, e.ID)
		case <-time.After(20 * time.Second):
			t.Fatalf("raw events so far %v", order)
		}
	}
	if order[0] != vm.ID || order[1] != marker.ID {
		t.Fatalf("raw events %v, want [%d %d]: the repeated STOPPED was published", order, vm.ID, marker.ID)
	}
	vms.next(&ev)
	if ev.VirtualMachineStatusChanged.Status != "STARTING" {
		t.Fatalf("VM event = %+v, want STARTING", ev.VirtualMachineStatusChanged)
	}

	svc := a.env.Client.RegionService.Create().SetName(uniq("svc")).SetTenantID(s.Tenant).SetRegionID(s.Region).
		SetReplicas(0).SaveX(gqltest.System())
	svcs := b.subscribe(t, gqltest.AdminToken, `subscription($t: ID) { regionServiceStatusChanged(tenantID: $t) { id status } }`,
		map[string]any{"t": gqltest.ID(s.Tenant)})
	a.env.Client.RegionService.UpdateOneID(svc.ID).SetStatus("ACTIVE").ExecX(gqltest.System())
	var sv struct{ RegionServiceStatusChanged struct{ ID, Status string } }
	svcs.next(&sv)
	if sv.RegionServiceStatusChanged.ID != gqltest.ID(svc.ID) || sv.RegionServiceStatusChanged.Status != "ACTIVE" {
		t.Fatalf("region service event = %+v", sv.RegionServiceStatusChanged)
	}
}

// TestLiveAuthorization: a tenant member never receives another tenant's VM; a node agent
// receives its own node's assignments and may not subscribe to another node's; without a
// token nothing is served.
func TestLiveAuthorization(t *testing.T) {
	a, b := twoReplicas(t)
	s := newLiveSite(t, a.env.Client)
	mine, theirs := s.vm(t, a.env.Client, s.Tenant), s.vm(t, a.env.Client, s.other)

	member := roleToken(t, a.env, authz.RoleTenantMember, s.Tenant, 0)
	sub := b.subscribe(t, member, vmSubscription, nil)
	setStatus(t, a.env.Client, theirs.ID, virtualmachine.StatusActive, true)
	setStatus(t, a.env.Client, mine.ID, virtualmachine.StatusActive, true)
	var ev liveVM
	sub.next(&ev)
	if ev.VirtualMachineStatusChanged.ID != gqltest.ID(mine.ID) {
		t.Fatalf("tenant member received VM %s (tenant %s), want only its own %d",
			ev.VirtualMachineStatusChanged.ID, ev.VirtualMachineStatusChanged.Tenant.ID, mine.ID)
	}
	// The admin filtering by the other tenant sees only that tenant's.
	admin := b.subscribe(t, gqltest.AdminToken, vmSubscription, map[string]any{"tenant": gqltest.ID(s.other)})
	setStatus(t, a.env.Client, mine.ID, virtualmachine.StatusStopped, true)
	setStatus(t, a.env.Client, theirs.ID, virtualmachine.StatusStopped, true)
	admin.next(&ev)
	if ev.VirtualMachineStatusChanged.ID != gqltest.ID(theirs.ID) {
		t.Fatalf("tenantID filter delivered VM %s, want %d", ev.VirtualMachineStatusChanged.ID, theirs.ID)
	}

	n0, n1 := s.Nodes[0].ID, s.Nodes[1].ID
	agent := roleToken(t, a.env, authz.RoleAgent, 0, n0)
	const assignments = `subscription($n: ID!) { assignmentChanged(nodeID: $n) { id desiredState generation node { id } } }`
	own := b.subscribe(t, agent, assignments, map[string]any{"n": gqltest.ID(n0)})
	a.env.Client.Assignment.Create().SetNodeID(n1).SetVirtualMachineID(theirs.ID).ExecX(gqltest.System())
	asg := a.env.Client.Assignment.Create().SetNodeID(n0).SetVirtualMachineID(mine.ID).SaveX(gqltest.System())
	var got struct {
		AssignmentChanged struct {
			ID, DesiredState string
			Generation       int
			Node             struct{ ID string }
		}
	}
	own.next(&got)
	if got.AssignmentChanged.ID != gqltest.ID(asg.ID) || got.AssignmentChanged.Node.ID != gqltest.ID(n0) {
		t.Fatalf("agent received %+v, want assignment %d of its node", got.AssignmentChanged, asg.ID)
	}
	a.env.Client.Assignment.UpdateOneID(asg.ID).SetDesiredState("STOPPED").AddGeneration(1).ExecX(gqltest.System())
	own.next(&got)
	if got.AssignmentChanged.DesiredState != "STOPPED" || got.AssignmentChanged.Generation != 2 {
		t.Fatalf("agent received %+v, want STOPPED at generation 2", got.AssignmentChanged)
	}

	if code := b.open(t, agent, assignments, map[string]any{"n": gqltest.ID(n1)}).failure(); code != "NOT_FOUND" {
		t.Errorf("agent subscribing to another node's assignments: %s, want NOT_FOUND", code)
	}
	if code := b.open(t, member, `subscription { nodeStatusChanged { id } }`, nil).failure(); code != "FORBIDDEN" {
		t.Errorf("tenant member subscribing to nodes: %s, want FORBIDDEN", code)
	}
	if code := b.open(t, agent, `subscription { regionServiceStatusChanged { id } }`, nil).failure(); code != "FORBIDDEN" {
		t.Errorf("agent subscribing to region services: %s, want FORBIDDEN", code)
	}
	if code := b.open(t, "", vmSubscription, nil).failure(); code != "UNAUTHENTICATED" {
		t.Errorf("anonymous subscription: %s, want UNAUTHENTICATED", code)
	}
}

// open subscribes without waiting for the hub (for subscriptions that must fail).
func (r *replica) open(t *testing.T, token, query string, vars map[string]any) *wsSub {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(r.url, "http")+"/query",
		&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close(websocket.StatusNormalClosure, "") })
	s := &wsSub{t: t, conn: conn}
	init := json.RawMessage(`{}`)
	if token != "" {
		init, _ = json.Marshal(map[string]any{"Authorization": "Bearer " + token})
	}
	s.send(ctx, wsMessage{Type: "connection_init", Payload: init})
	if m := s.read(ctx); m.Type != "connection_ack" {
		t.Fatalf("connection_init answered %s %s", m.Type, m.Payload)
	}
	payload, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	s.send(ctx, wsMessage{ID: "1", Type: "subscribe", Payload: payload})
	return s
}

// TestLiveEmbedded: the embedded mode (SQLite, in-process Redis) delivers too.
func TestLiveEmbedded(t *testing.T) {
	r := openReplica(t, "", t.TempDir(), "", livestatus.Channel)
	s := newLiveSite(t, r.env.Client)
	node := s.Nodes[1].ID
	sub := r.subscribe(t, gqltest.AdminToken, `subscription($c: ID) { nodeStatusChanged(clusterID: $c) { id schedulable } }`,
		map[string]any{"c": gqltest.ID(s.Cluster)})
	r.env.MustDo(t, cordonNode, map[string]any{"id": gqltest.ID(node)}, nil)
	var got struct {
		NodeStatusChanged struct {
			ID          string
			Schedulable bool
		}
	}
	sub.next(&got)
	if got.NodeStatusChanged.ID != gqltest.ID(node) || got.NodeStatusChanged.Schedulable {
		t.Fatalf("node event = %+v", got.NodeStatusChanged)
	}
}

// memberCredential makes a user holding the tenant-member role of tenant and a token of
// it, and returns the token, its id, the binding's id and the user's id.
func memberCredential(t *testing.T, env *gqltest.Env, tenant int, expires *time.Time) (token string, tokenID, bindingID, userID int) {
	t.Helper()
	ctx := gqltest.System()
	u := env.Client.User.Create().SetUsername(uniq("member")).AddTenantIDs(tenant).SaveX(ctx)
	b, err := env.Identity.GrantRole(ctx, u.ID, authz.RoleTenantMember, &tenant, nil)
	if err != nil {
		t.Fatal(err)
	}
	plain, hash, prefix := identity.NewToken(apitoken.KindApi)
	tok := env.Client.APIToken.Create().SetName(uniq("token")).SetTokenHash(hash).SetPrefix(prefix).
		SetKind(apitoken.KindApi).SetScope(apitoken.ScopeReadWrite).SetOwnerID(u.ID).SetNillableExpiresAt(expires).SaveX(ctx)
	return plain, tok.ID, b.ID, u.ID
}

// closed waits (at most 20 s) for the server to close the websocket and returns the close
// code and reason and when the close arrived; a complete may come first, an event is a
// failure.
func (s *wsSub) closed() (websocket.StatusCode, string, time.Time) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		var m wsMessage
		err := wsjson.Read(ctx, s.conn, &m)
		if err != nil {
			var ce websocket.CloseError
			if !errors.As(err, &ce) {
				s.t.Fatalf("websocket not closed by the server: %v", err)
			}
			return ce.Code, ce.Reason, time.Now()
		}
		switch m.Type {
		case "ping":
			_ = wsjson.Write(ctx, s.conn, wsMessage{Type: "pong"})
			continue
		case "complete": // the subscription ends as the connection closes
			continue
		}
		s.t.Fatalf("got %s %s after the credentials ended, want the websocket closed", m.Type, m.Payload)
	}
}

// TestLiveEndsWithCredentials: a subscription open on replica B ends — the websocket closed
// with 4401 (credentials no longer valid) or 4403 (permissions changed) — when its token is
// revoked through replica A, its role binding is revoked through A, its owner is disabled,
// or its token expires; a new request with the token is refused as well. It logs the time
// from the change to the close.
func TestLiveEndsWithCredentials(t *testing.T) {
	a, b := twoReplicas(t)
	s := newLiveSite(t, a.env.Client)
	vm := s.vm(t, a.env.Client, s.Tenant)
	const revokeToken = `mutation($id: ID!) { revokeAPIToken(id: $id) { id revokedAt } }`
	const revokeRole = `mutation($id: ID!) { revokeRole(id: $id) }`
	cases := []struct {
		name    string
		expires time.Duration
		end     func(t *testing.T, tokenID, bindingID, userID int)
		code    websocket.StatusCode
	}{
		{name: "token revoked", code: 4401, end: func(t *testing.T, tokenID, _, _ int) {
			a.env.MustDo(t, revokeToken, map[string]any{"id": gqltest.ID(tokenID)}, nil)
		}},
		{name: "role binding revoked", code: 4403, end: func(t *testing.T, _, bindingID, _ int) {
			a.env.MustDo(t, revokeRole, map[string]any{"id": gqltest.ID(bindingID)}, nil)
		}},
		{name: "user disabled", code: 4401, end: func(t *testing.T, _, _, userID int) {
			a.env.Client.User.UpdateOneID(userID).SetStatus(user.StatusDisabled).ExecX(gqltest.System())
		}},
		{name: "token expired", code: 4401, expires: 8 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var expires *time.Time
			if tc.expires > 0 {
				at := time.Now().Add(tc.expires)
				expires = &at
			}
			token, tokenID, bindingID, userID := memberCredential(t, a.env, s.Tenant, expires)
			sub := b.subscribe(t, token, vmSubscription, map[string]any{"id": gqltest.ID(vm.ID)})
			setStatus(t, a.env.Client, vm.ID, virtualmachine.StatusActive, true)
			var ev liveVM
			sub.next(&ev) // live before the change
			setStatus(t, a.env.Client, vm.ID, virtualmachine.StatusStopped, true)
			sub.next(&ev)
			var changed time.Time
			if tc.end != nil {
				tc.end(t, tokenID, bindingID, userID)
				changed = time.Now()
			} else {
				changed = *expires
			}
			code, reason, at := sub.closed()
			t.Logf("%s: websocket on the other replica closed %v after the change (%d %q)",
				tc.name, at.Sub(changed).Round(time.Millisecond), code, reason)
			if code != tc.code {
				t.Fatalf("close code %d %q, want %d", code, reason, tc.code)
			}
			if tc.code == 4401 {
				if res := b.env.As(token).Do(t, `{ me { id } }`, nil); len(res.Errors) == 0 {
					t.Fatal("a new request with the token was accepted")
				}
			}
		})
	}
}

// TestLiveDeliveredOnce: one state of a VM reaches a subscriber on the other replica once,
// even when it was written by two mutations in one transaction.
func TestLiveDeliveredOnce(t *testing.T) {
	a, b := twoReplicas(t)
	s := newLiveSite(t, a.env.Client)
	vm := s.vm(t, a.env.Client, s.Tenant)
	sub := b.subscribe(t, gqltest.AdminToken, vmSubscription, map[string]any{"id": gqltest.ID(vm.ID)})
	tx, err := a.env.Client.Tx(gqltest.System())
	if err != nil {
		t.Fatal(err)
	}
	tx.VirtualMachine.UpdateOneID(vm.ID).SetStatus(virtualmachine.StatusActive).ExecX(gqltest.System())
	tx.VirtualMachine.UpdateOneID(vm.ID).SetStatusReason("running").ExecX(gqltest.System())
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	var ev liveVM
	sub.next(&ev)
	if ev.VirtualMachineStatusChanged.Status != "ACTIVE" || ev.VirtualMachineStatusChanged.StatusReason != "running" {
		t.Fatalf("delivered %+v, want ACTIVE running", ev.VirtualMachineStatusChanged)
	}
	// A marker change: the next delivery must be it, not the ACTIVE state again.
	setStatus(t, a.env.Client, vm.ID, virtualmachine.StatusStopped, true)
	sub.next(&ev)
	if ev.VirtualMachineStatusChanged.Status != "STOPPED" {
		t.Fatalf("delivered %s, want STOPPED (the ACTIVE state was delivered twice)", ev.VirtualMachineStatusChanged.Status)
	}
}
