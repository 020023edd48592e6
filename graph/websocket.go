package graph

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/identity"
	"github.com/virtflow/virtflow/gateway/livestatus"
)

// Close codes of a websocket ended because its credentials changed (the graphql-ws
// convention of 4400-4499 for the 4xx the same request would get over HTTP).
const (
	// CloseUnauthenticated: the token was revoked or expired, or its owner disabled.
	CloseUnauthenticated = 4401
	// CloseForbidden: the token is valid but grants something else now (a role revoked or
	// granted): connect again to act with the new permissions.
	CloseForbidden = 4403
	// CloseInternal: the credentials could not be checked again (database unreachable);
	// the connection is not kept on unchecked credentials.
	CloseInternal = 1011
)

// websocketTransport is the GraphQL websocket transport: keepalive pings, and a
// connection_init that authenticates the connection (opts.Identity) and, with live status
// (opts.Live), keeps checking it: a websocket whose credentials are revoked, expire or change
// is closed with CloseUnauthenticated or CloseForbidden, ending its subscriptions, within
// moments on every replica (livestatus.CredentialWatch).
func websocketTransport(opts Options) transport.Websocket {
	ws := transport.Websocket{
		KeepAlivePingInterval: 10 * time.Second,
		InitTimeout:           30 * time.Second,
		Implementation:        closingWebsocket{transport.CoderWebsocketImplementation{}},
	}
	if opts.Identity == nil {
		return ws
	}
	ws.InitFunc = func(ctx context.Context, p transport.InitPayload) (context.Context, *transport.InitPayload, error) {
		var watch *livestatus.CredentialWatch
		if opts.Live != nil {
			watch = opts.Live.WatchCredentials(ctx) // before authenticating: no revocation missed
		}
		_, sent := p["Authorization"]
		if _, lower := p["authorization"]; lower {
			sent = true
		}
		ctx, err := opts.Identity.WebsocketInit(ctx, map[string]any(p))
		cred := identity.CredentialFromContext(ctx)
		if err != nil || watch == nil || cred == nil {
			if watch != nil {
				watch.Stop()
			}
			return ctx, nil, err
		}
		reauth := func(ctx context.Context) (*authz.Viewer, *time.Time, error) {
			return opts.Identity.Reauthenticate(ctx, cred)
		}
		viewer := authz.FromContext(ctx)
		if !sent {
			// Authenticated by Middleware on the upgrade request, before the watch began.
			if viewer, _, err = reauth(ctx); err != nil {
				watch.Stop()
				return ctx, nil, err
			}
		}
		ctx, cancel := context.WithCancelCause(ctx)
		go func() {
			err := watch.Run(ctx, viewer, cred.ExpiresAt, opts.CredentialRecheck, reauth)
			if err == nil {
				return
			}
			code, reason := CloseInternal, "credentials could not be checked: connect again"
			if e, ok := apierr.As(err); ok && e.Code == apierr.CodeUnauthenticated {
				code, reason = CloseUnauthenticated, e.Message
			} else if errors.Is(err, livestatus.ErrViewerChanged) {
				code, reason = CloseForbidden, err.Error()
			} else {
				opts.Logger.Error("graph: recheck websocket credentials", "err", err)
			}
			closing(ctx).set(code, reason)
			cancel(err)
		}()
		return ctx, nil, nil
	}
	return ws
}

// websocketClose is how a websocket connection is to be closed, decided by the connection's
// credential watch before it ends the connection's context (gqlgen then closes with 1000).
type websocketClose struct {
	mu     sync.Mutex
	code   int
	reason string
}

func (c *websocketClose) set(code int, reason string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.code, c.reason = code, reason
}

func (c *websocketClose) get() (int, string, bool) {
	if c == nil {
		return 0, "", false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.code, c.reason, c.code != 0
}

type websocketCloseKey struct{}

func closing(ctx context.Context) *websocketClose {
	c, _ := ctx.Value(websocketCloseKey{}).(*websocketClose)
	return c
}

// withWebsocketClose gives every websocket upgrade request a websocketClose in its context
// (the context gqlgen hands to connection_init and the connection's operations).
func withWebsocketClose(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "" {
			r = r.WithContext(context.WithValue(r.Context(), websocketCloseKey{}, &websocketClose{}))
		}
		next.ServeHTTP(w, r)
	})
}

// closingWebsocket accepts websockets whose close frame carries the code and reason set
// in the request's websocketClose, if any.
type closingWebsocket struct {
	transport.WebsocketImplementation
}

func (i closingWebsocket) Accept(w http.ResponseWriter, r *http.Request, o transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	conn, err := i.WebsocketImplementation.Accept(w, r, o)
	if err != nil {
		return nil, err
	}
	return closingConn{WebsocketConn: conn, close: closing(r.Context())}, nil
}

// closingConn is a websocket connection closed with the code of its websocketClose. It
// passes the read limit and deadlines on to the connection it wraps.
type closingConn struct {
	transport.WebsocketConn
	close *websocketClose
}

func (c closingConn) WriteClose(code int, message string) error {
	if cc, reason, ok := c.close.get(); ok {
		code, message = cc, reason
	}
	return c.WebsocketConn.WriteClose(code, message)
}

func (c closingConn) SetReadLimit(limit int64) {
	if l, ok := c.WebsocketConn.(transport.WebsocketReadLimiter); ok {
		l.SetReadLimit(limit)
	}
}

func (c closingConn) SetReadDeadline(t time.Time) error {
	if d, ok := c.WebsocketConn.(transport.WebsocketReadDeadliner); ok {
		return d.SetReadDeadline(t)
	}
	return nil
}
