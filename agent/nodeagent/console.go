package nodeagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/virtflow/virtflow/agent/consoleproto"
	"github.com/virtflow/virtflow/agent/hypervisor"
	"github.com/virtflow/virtflow/store/truncate"
)

// DefaultMaxConsoleSessions bounds the console sessions an agent relays at once.
const DefaultMaxConsoleSessions = 8

// ConsoleRelay relays domains' serial consoles to the server (see package consoleproto):
// it keeps a control websocket to the server, dialed out with the agent token, and for
// every request dials a session websocket back and copies the console both ways. The agent
// runs one when its hypervisor implements [hypervisor.Consoler]; tests run it alone.
type ConsoleRelay struct {
	// APIURL is the server's GraphQL URL (…/query); the console paths are beside it.
	APIURL string
	Token  string
	// Consoles opens the consoles.
	Consoles hypervisor.Consoler
	// HTTPClient dials the websockets; http.DefaultClient when nil.
	HTTPClient *http.Client
	Log        *slog.Logger
	// MaxSessions bounds the sessions relayed at once; DefaultMaxConsoleSessions when zero.
	MaxSessions int
	// MetricsAddr is the agent's --metrics-addr, told to the server for its Prometheus
	// service discovery; empty: none.
	MetricsAddr string
	// WriteTimeout ends a session whose server side does not take output; 10 s when zero.
	WriteTimeout time.Duration
}

// Run keeps the control connection until ctx ends, reconnecting with the agent's backoff.
func (r *ConsoleRelay) Run(ctx context.Context) {
	if r.Log == nil {
		r.Log = slog.New(slog.DiscardHandler)
	}
	if r.MaxSessions <= 0 {
		r.MaxSessions = DefaultMaxConsoleSessions
	}
	if r.WriteTimeout <= 0 {
		r.WriteTimeout = 10 * time.Second
	}
	slots := make(chan struct{}, r.MaxSessions)
	var wg sync.WaitGroup
	defer wg.Wait()
	b := newBackOff(time.Second, 30*time.Second)
	for ctx.Err() == nil {
		start := time.Now()
		err := r.control(ctx, slots, &wg)
		if ctx.Err() != nil {
			return
		}
		if time.Since(start) > time.Minute {
			b.Reset()
		}
		wait := b.NextBackOff()
		r.Log.Debug("console control connection ended", "err", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// base is the server's root URL as a websocket URL: ws(s)://host[:port].
func (r *ConsoleRelay) base() string {
	u := strings.TrimSuffix(r.APIURL, "/query")
	switch {
	case strings.HasPrefix(u, "https://"):
		return "wss://" + strings.TrimPrefix(u, "https://")
	case strings.HasPrefix(u, "http://"):
		return "ws://" + strings.TrimPrefix(u, "http://")
	}
	return u
}

func (r *ConsoleRelay) dial(ctx context.Context, path string) (*websocket.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(dctx, r.base()+path, &websocket.DialOptions{HTTPClient: r.HTTPClient,
		HTTPHeader: http.Header{"Authorization": {"Bearer " + r.Token}}})
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", path, err)
	}
	return c, nil
}

// control runs one control connection: it reads requests and starts their sessions.
func (r *ConsoleRelay) control(ctx context.Context, slots chan struct{}, wg *sync.WaitGroup) error {
	c, err := r.dial(ctx, consoleproto.AgentControlPath)
	if err != nil {
		return err
	}
	defer c.CloseNow()
	c.SetReadLimit(4096)
	hello, _ := json.Marshal(consoleproto.Hello{MetricsAddr: r.MetricsAddr})
	if err := c.Write(ctx, websocket.MessageText, hello); err != nil {
		return err
	}
	for {
		_, msg, err := c.Read(ctx)
		if err != nil {
			return err
		}
		var req consoleproto.Request
		if err := json.Unmarshal(msg, &req); err != nil || req.Session == "" || req.Domain == "" {
			r.Log.Warn("console: bad request from the server", "msg", string(msg))
			continue
		}
		if _, ok := hypervisor.ParseDomainName(req.Domain); !ok {
			r.Log.Warn("console: request for a domain VirtFlow does not manage", "domain", req.Domain)
			continue
		}
		select {
		case slots <- struct{}{}:
		default:
			r.Log.Warn("console: too many sessions; request refused", "domain", req.Domain, "max", r.MaxSessions)
			continue // the server times the session out
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			if err := r.session(ctx, req); err != nil && ctx.Err() == nil {
				r.Log.Info("console session ended", "domain", req.Domain, "session", req.Session, "err", err)
			}
		}()
	}
}

// wsWriter writes console output to the session websocket, one message per write, each
// bounded by timeout: a stalled server ends the session instead of holding the console.
type wsWriter struct {
	ctx     context.Context
	c       *websocket.Conn
	timeout time.Duration
}

func (w wsWriter) Write(p []byte) (int, error) {
	ctx, cancel := context.WithTimeout(w.ctx, w.timeout)
	defer cancel()
	if err := w.c.Write(ctx, websocket.MessageBinary, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// session relays one console until either side ends it.
func (r *ConsoleRelay) session(ctx context.Context, req consoleproto.Request) error {
	c, err := r.dial(ctx, consoleproto.AgentSessionPrefix+req.Session)
	if err != nil {
		return err
	}
	defer c.CloseNow()
	c.SetReadLimit(64 << 10)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := r.Consoles.OpenConsole(ctx, req.Domain, wsWriter{ctx: ctx, c: c, timeout: r.WriteTimeout})
	if err != nil {
		code := websocket.StatusCode(consoleproto.CodeUnavailable)
		switch {
		case errors.Is(err, hypervisor.ErrNotFound):
			code = consoleproto.CodeNotFound
		case errors.Is(err, hypervisor.ErrNotRunning):
			code = consoleproto.CodeNotRunning
		}
		_ = c.Close(code, truncateReason(err.Error()))
		return err
	}
	defer stream.Close()
	r.Log.Info("console session opened", "domain", req.Domain, "session", req.Session)
	input := make(chan error, 1)
	go func() {
		for {
			_, msg, err := c.Read(ctx)
			if err != nil {
				input <- err
				return
			}
			if _, err := stream.Write(msg); err != nil {
				input <- err
				return
			}
		}
	}()
	select {
	case err := <-input:
		return err
	case <-stream.Done():
		err := stream.Err()
		reason := "the console ended"
		if err != nil {
			reason = truncateReason("the console ended: " + err.Error())
		}
		_ = c.Close(websocket.StatusNormalClosure, reason)
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// truncateReason keeps a close reason within a close frame's 123 bytes.
func truncateReason(s string) string { return truncate.String(s, 120) }
