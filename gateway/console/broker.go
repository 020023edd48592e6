// Package console is the server's side of VM consoles: a browser (or the CLI) opens a
// websocket to a VM's console, the [Broker] authorizes it (the VM must be one the viewer may
// change: its tenant's members, operators and admins; a VM the viewer cannot see is not
// found), writes an audit record of the session, asks the VM's node agent over the agent's
// control websocket to relay the domain's serial console, and splices the two websockets
// together when the agent dials back. The wire contract with the agent is in package
// consoleproto.
//
// Nothing is buffered beyond one websocket message per direction: a write that does not
// complete within WriteTimeout ends the session, so a slow client holds neither the agent
// nor the server. Sessions end after IdleTimeout without a byte either way and are limited
// in number per server and per node.
//
// Sessions live in the process that accepted them: with several server replicas, the
// agent's control connection and its dial-back must reach the replica holding the
// browser's websocket, so route /agent/console* and /api/virtual-machines/*/console to one
// replica (or make them sticky per node).
package console

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/virtflow/virtflow/agent/consoleproto"
	"github.com/virtflow/virtflow/agent/hypervisor"
	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/audit"
	"github.com/virtflow/virtflow/domain/identity"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	truncatestr "github.com/virtflow/virtflow/store/truncate"
)

// Defaults of [Config].
const (
	DefaultMaxSessions  = 64
	DefaultMaxPerNode   = 8
	DefaultOpenTimeout  = 15 * time.Second
	DefaultIdleTimeout  = 30 * time.Minute
	DefaultWriteTimeout = 10 * time.Second
	// MaxMessageBytes bounds one websocket message in either direction.
	MaxMessageBytes = 64 << 10
	// AuditAction is the action of the audit record every session writes.
	AuditAction = "openConsole"
)

// Config configures a [Broker].
type Config struct {
	Client   *ent.Client
	Identity *identity.Service
	Log      *slog.Logger
	// MaxSessions bounds the sessions open at once on this server; MaxPerNode those of one node.
	MaxSessions, MaxPerNode int
	// OpenTimeout bounds the wait for the agent to dial back.
	OpenTimeout time.Duration
	// IdleTimeout ends a session without traffic; WriteTimeout a session whose peer does not
	// take a message.
	IdleTimeout, WriteTimeout time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Broker connects users' console websockets with node agents'. Its zero value is not
// usable: make it with New.
type Broker struct {
	cfg Config

	mu       sync.Mutex
	agents   map[int]*agentConn // by node id
	pending  map[string]*pendingSession
	sessions int
	perNode  map[int]int
}

// agentConn is an agent's control websocket; requests go through send, a small buffer the
// connection's writer drains.
type agentConn struct {
	node    int
	metrics string // host:port of the agent's /metrics, or ""
	send    chan consoleproto.Request
}

// pendingSession waits for its agent's dial-back.
type pendingSession struct {
	node  int
	ready chan *websocket.Conn // buffered 1; the agent's session websocket
	taken chan struct{}        // closed by the browser side when done with the session
}

// New returns a broker.
func New(cfg Config) *Broker {
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = DefaultMaxSessions
	}
	if cfg.MaxPerNode <= 0 {
		cfg.MaxPerNode = DefaultMaxPerNode
	}
	if cfg.OpenTimeout <= 0 {
		cfg.OpenTimeout = DefaultOpenTimeout
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Broker{cfg: cfg, agents: map[int]*agentConn{}, pending: map[string]*pendingSession{}, perNode: map[int]int{}}
}

// Handlers are the broker's HTTP handlers, by net/http pattern; the caller wraps each with
// the identity middleware (which sets the viewer from an Authorization header).
func (b *Broker) Handlers() map[string]http.Handler {
	return map[string]http.Handler{
		consoleproto.BrowserPathPattern:                        http.HandlerFunc(b.serveUser),
		"GET " + consoleproto.AgentControlPath:                 http.HandlerFunc(b.serveAgentControl),
		"GET " + consoleproto.AgentSessionPrefix + "{session}": http.HandlerFunc(b.serveAgentSession),
	}
}

// AgentConnected reports whether node's agent holds a control connection to this server.
func (b *Broker) AgentConnected(node int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.agents[node] != nil
}

// Target is an agent's metrics endpoint, for Prometheus service discovery.
type Target struct {
	Node int
	Addr string // host:port
}

// MetricsTargets returns the metrics endpoints of the agents connected to this server,
// sorted by node.
func (b *Broker) MetricsTargets() []Target {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Target, 0, len(b.agents))
	for node, a := range b.agents {
		if a.metrics != "" {
			out = append(out, Target{Node: node, Addr: a.metrics})
		}
	}
	slices.SortFunc(out, func(x, y Target) int { return x.Node - y.Node })
	return out
}

// metricsTarget is the agent's advertised metrics address, its host taken from the
// connection's remote address when it names none (":9101") or an unspecified one.
func metricsTarget(advertised, remote string) string {
	host, port, err := net.SplitHostPort(advertised)
	if err != nil || port == "" {
		return ""
	}
	if ip, err := netip.ParseAddr(host); host == "" || (err == nil && ip.IsUnspecified()) {
		rh, _, err := net.SplitHostPort(remote)
		if err != nil {
			return ""
		}
		host = rh
	}
	return net.JoinHostPort(host, port)
}

// agentNode returns the node of an agent viewer, or 0.
func agentNode(v *authz.Viewer) int {
	if v == nil {
		return 0
	}
	for _, bd := range v.Bindings {
		if bd.Role != authz.RoleAgent {
			continue
		}
		if kind, id, ok := authz.DomainID(bd.Domain); ok && kind == "node" {
			return id
		}
	}
	return 0
}

// serveAgentControl keeps an agent's control websocket: requests are written to it; the
// agent sends nothing but pings (answered by the library).
func (b *Broker) serveAgentControl(w http.ResponseWriter, r *http.Request) {
	node := agentNode(authz.FromContext(r.Context()))
	if node == 0 {
		http.Error(w, "an agent token is required", http.StatusUnauthorized)
		return
	}
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	c.SetReadLimit(1024)
	a := &agentConn{node: node, send: make(chan consoleproto.Request, 16)}
	hctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	_, msg, err := c.Read(hctx)
	cancel()
	if err != nil {
		_ = c.CloseNow()
		return
	}
	var hello consoleproto.Hello
	if json.Unmarshal(msg, &hello) == nil {
		a.metrics = metricsTarget(hello.MetricsAddr, r.RemoteAddr)
	}
	b.mu.Lock()
	b.agents[node] = a // a reconnecting agent replaces its old connection
	b.mu.Unlock()
	b.cfg.Log.Info("console: agent connected", "node", node)
	ctx := c.CloseRead(r.Context()) // ends when the agent goes
	defer func() {
		b.mu.Lock()
		if b.agents[node] == a {
			delete(b.agents, node)
		}
		b.mu.Unlock()
		_ = c.CloseNow()
		b.cfg.Log.Info("console: agent disconnected", "node", node)
	}()
	ping := time.NewTicker(30 * time.Second)
	defer ping.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case req := <-a.send:
			msg, _ := json.Marshal(req)
			wctx, cancel := context.WithTimeout(ctx, b.cfg.WriteTimeout)
			err := c.Write(wctx, websocket.MessageText, msg)
			cancel()
			if err != nil {
				return
			}
		case <-ping.C:
			pctx, cancel := context.WithTimeout(ctx, b.cfg.WriteTimeout)
			err := c.Ping(pctx)
			cancel()
			if err != nil {
				return
			}
		}
	}
}

// serveAgentSession takes an agent's dial-back for a pending session and hands it to the
// user's side, which owns it from then on.
func (b *Broker) serveAgentSession(w http.ResponseWriter, r *http.Request) {
	node := agentNode(authz.FromContext(r.Context()))
	if node == 0 {
		http.Error(w, "an agent token is required", http.StatusUnauthorized)
		return
	}
	id := r.PathValue("session")
	b.mu.Lock()
	p := b.pending[id]
	if p != nil && p.node == node {
		delete(b.pending, id)
	} else {
		p = nil
	}
	b.mu.Unlock()
	if p == nil {
		http.Error(w, "no such console session", http.StatusNotFound)
		return
	}
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		close(p.ready)
		return
	}
	c.SetReadLimit(MaxMessageBytes)
	p.ready <- c
	// The handler must not return while the session runs: the connection is hijacked, but
	// its request context ends with the handler.
	<-p.taken
}

// serveUser is a user's console websocket of VM {id}.
func (b *Broker) serveUser(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, nil) // same-origin only: a page elsewhere cannot open it
	if err != nil {
		return
	}
	defer c.CloseNow()
	c.SetReadLimit(MaxMessageBytes)
	ctx := r.Context()
	closeWith := func(code websocket.StatusCode, reason string) {
		_ = c.Close(code, truncate(reason))
	}

	// The viewer: from the Authorization header (the CLI), or from the first message
	// ("Bearer <token>"), since a browser cannot set headers on a websocket.
	if authz.FromContext(ctx) == nil {
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, msg, err := c.Read(actx)
		cancel()
		if err != nil {
			closeWith(consoleproto.CodeUnauth, "send \"Bearer <token>\" as the first message")
			return
		}
		vctx, err := b.cfg.Identity.WebsocketInit(ctx, map[string]any{"Authorization": strings.TrimSpace(string(msg))})
		if err != nil || authz.FromContext(vctx) == nil {
			closeWith(consoleproto.CodeUnauth, "invalid token")
			return
		}
		ctx = vctx
	}

	vm, node, code, reason := b.authorize(ctx, r.PathValue("id"))
	if code != 0 {
		closeWith(code, reason)
		return
	}
	sid, release, err := b.reserve(node)
	if err != nil {
		closeWith(consoleproto.CodeUnavailable, err.Error())
		return
	}
	defer release()
	if err := audit.Write(ctx, b.cfg.Client, audit.Entry{Action: AuditAction, Subject: vm,
		After: map[string]any{"session": sid, "node": node}, SourceIP: identity.SourceIP(ctx)}); err != nil {
		b.cfg.Log.ErrorContext(ctx, "console: audit", "err", err)
		closeWith(websocket.StatusInternalError, "internal error")
		return
	}
	agentWS, err := b.dialAgent(ctx, sid, node, hypervisor.DomainName(int64(vm.ID)))
	if err != nil {
		closeWith(consoleproto.CodeUnavailable, err.Error())
		return
	}
	start := b.cfg.Now()
	up, down, why := b.splice(ctx, c, agentWS)
	b.cfg.Log.Info("console: session ended", "session", sid, "vm", vm.ID, "node", node, "actor", authz.Actor(ctx),
		"duration_ms", b.cfg.Now().Sub(start).Milliseconds(), "bytes_in", up, "bytes_out", down, "reason", why)
}

// authorize finds VM idText for the viewer of ctx and its node; a non-zero code says why not.
func (b *Broker) authorize(ctx context.Context, idText string) (*ent.VirtualMachine, int, websocket.StatusCode, string) {
	id, err := strconv.Atoi(idText)
	if err != nil || id <= 0 {
		return nil, 0, consoleproto.CodeNotFound, "virtual machine not found"
	}
	vm, err := b.cfg.Client.VirtualMachine.Query().Where(virtualmachine.ID(id)).Only(ctx)
	if err != nil {
		if !ent.IsNotFound(err) {
			b.cfg.Log.ErrorContext(ctx, "console: read VM", "vm", id, "err", err)
		}
		return nil, 0, consoleproto.CodeNotFound, "virtual machine not found"
	}
	ok, err := authz.MayWrite(ctx, b.cfg.Client, "VirtualMachine", id)
	if err != nil || !ok {
		return nil, 0, consoleproto.CodeForbidden, "the console needs the right to change this virtual machine"
	}
	node, err := vm.QueryNode().OnlyID(authz.SystemContext(ctx, "console"))
	if err != nil {
		return nil, 0, consoleproto.CodeUnavailable, "the virtual machine is not placed on a node"
	}
	return vm, node, 0, ""
}

// reserve counts a session against the limits and returns its id.
func (b *Broker) reserve(node int) (string, func(), error) {
	var raw [16]byte
	_, _ = rand.Read(raw[:])
	sid := hex.EncodeToString(raw[:])
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sessions >= b.cfg.MaxSessions {
		return "", nil, fmt.Errorf("too many console sessions on this server (%d)", b.cfg.MaxSessions)
	}
	if b.perNode[node] >= b.cfg.MaxPerNode {
		return "", nil, fmt.Errorf("too many console sessions on this node (%d)", b.cfg.MaxPerNode)
	}
	b.sessions++
	b.perNode[node]++
	return sid, func() {
		b.mu.Lock()
		b.sessions--
		b.perNode[node]--
		b.mu.Unlock()
	}, nil
}

// dialAgent asks node's agent for session sid of domain and waits for its dial-back.
func (b *Broker) dialAgent(ctx context.Context, sid string, node int, domain string) (*agentSession, error) {
	p := &pendingSession{node: node, ready: make(chan *websocket.Conn, 1), taken: make(chan struct{})}
	b.mu.Lock()
	a := b.agents[node]
	if a != nil {
		b.pending[sid] = p
	}
	b.mu.Unlock()
	if a == nil {
		return nil, errors.New("the node's agent is not connected")
	}
	forget := func() {
		b.mu.Lock()
		delete(b.pending, sid)
		b.mu.Unlock()
	}
	select {
	case a.send <- consoleproto.Request{Session: sid, Domain: domain}:
	default:
		forget()
		return nil, errors.New("the node's agent is busy")
	}
	t := time.NewTimer(b.cfg.OpenTimeout)
	defer t.Stop()
	select {
	case c, ok := <-p.ready:
		if !ok {
			close(p.taken)
			return nil, errors.New("the node's agent failed to connect")
		}
		return &agentSession{Conn: c, taken: p.taken}, nil
	case <-t.C:
		forget()
		return nil, errors.New("the node's agent did not answer")
	case <-ctx.Done():
		forget()
		return nil, ctx.Err()
	}
}

// agentSession is the agent's side of a session; done releases its handler.
type agentSession struct {
	*websocket.Conn
	taken chan struct{}
	once  sync.Once
}

func (a *agentSession) done() { a.once.Do(func() { close(a.taken) }) }

// splice copies messages both ways until either side ends, the session idles out or a
// write stalls. It returns the bytes sent to the guest and from it, and why it ended.
func (b *Broker) splice(ctx context.Context, user *websocket.Conn, agent *agentSession) (up, down int64, why string) {
	defer agent.done()
	defer agent.CloseNow()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var last atomic.Int64
	last.Store(b.cfg.Now().UnixNano())
	type end struct {
		from string
		err  error
	}
	ends := make(chan end, 2)
	pump := func(from, to *websocket.Conn, n *int64, name string) {
		for {
			typ, msg, err := from.Read(ctx)
			if err != nil {
				ends <- end{name, err}
				return
			}
			last.Store(b.cfg.Now().UnixNano())
			wctx, wcancel := context.WithTimeout(ctx, b.cfg.WriteTimeout)
			err = to.Write(wctx, typ, msg)
			wcancel()
			if err != nil {
				ends <- end{name, fmt.Errorf("write stalled or failed: %w", err)}
				return
			}
			atomic.AddInt64(n, int64(len(msg)))
		}
	}
	go pump(user, agent.Conn, &up, "user")
	go pump(agent.Conn, user, &down, "agent")
	tick := time.NewTicker(min(b.cfg.IdleTimeout/4+time.Millisecond, 30*time.Second))
	defer tick.Stop()
	for {
		select {
		case e := <-ends:
			if e.from == "agent" {
				// The agent's close status (not running, no such domain…) is the user's.
				var ce websocket.CloseError
				if errors.As(e.err, &ce) {
					_ = user.Close(ce.Code, ce.Reason)
				} else {
					_ = user.Close(consoleproto.CodeUnavailable, "the node's agent went away")
				}
			}
			cancel()
			return atomic.LoadInt64(&up), atomic.LoadInt64(&down), e.from + ": " + closeReason(e.err)
		case <-tick.C:
			if b.cfg.Now().Sub(time.Unix(0, last.Load())) > b.cfg.IdleTimeout {
				_ = user.Close(consoleproto.CodeIdle, "idle for too long")
				return atomic.LoadInt64(&up), atomic.LoadInt64(&down), "idle"
			}
		}
	}
}

// closeReason is the close status and reason of err, or err's text.
func closeReason(err error) string {
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		return fmt.Sprintf("%d %s", ce.Code, ce.Reason)
	}
	return err.Error()
}

// truncate keeps a close reason within the 123 bytes a close frame allows.
func truncate(s string) string { return truncatestr.String(s, 120) }
