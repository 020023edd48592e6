package livestatus

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/virtflow/virtflow/authz"
)

// DefaultRecheck is how often a watched connection authenticates again when no event asked
// it to: a fallback for Credentials events missed while this process's Redis subscription
// was down.
const DefaultRecheck = 5 * time.Minute

// ErrViewerChanged ends a connection whose credentials are still valid but now stand for a
// different viewer (a role granted or revoked, a maintainer group left): the connection's
// operations run as the viewer it was opened with, so the client must connect again.
var ErrViewerChanged = errors.New("the permissions of this connection changed: connect again")

// Reauthenticate checks a connection's credentials again against the database: the viewer
// they stand for now and when they expire (nil: never), or an error (UNAUTHENTICATED once
// they are revoked, expired or their owner disabled).
type Reauthenticate func(context.Context) (*authz.Viewer, *time.Time, error)

// CredentialWatch follows the Credentials events of one long-lived connection (a GraphQL
// websocket). It is taken before the connection authenticates, so that a revocation
// committed while authenticating is not missed, and run once the viewer is known.
type CredentialWatch struct {
	user   atomic.Int64 // 0 until Run: every Credentials event is kept until then
	events <-chan Event
	stop   context.CancelFunc
}

// WatchCredentials starts collecting Credentials events for a connection about to
// authenticate; Run or Stop it.
func (h *Hub) WatchCredentials(ctx context.Context) *CredentialWatch {
	ctx, stop := context.WithCancel(ctx)
	w := &CredentialWatch{stop: stop}
	w.events = h.subscribe(ctx, &subscriber{credentials: true, ch: make(chan Event, subscriberBuffer), match: func(e Event) bool {
		if e.Type != Credentials {
			return false
		}
		u := w.user.Load()
		return u == 0 || int(u) == e.ID
	}})
	return w
}

// Stop ends the watch of a connection that did not authenticate.
func (w *CredentialWatch) Stop() { w.stop() }

// Run guards a connection opened by viewer v with credentials expiring at expires (nil:
// never): it calls reauth whenever a Credentials event names v's user, when the
// credentials expire, and every recheck (DefaultRecheck when zero). It returns reauth's
// error, or ErrViewerChanged when reauth answers for a viewer other than v, at which point
// the caller ends the connection; it returns nil when ctx ends.
func (w *CredentialWatch) Run(ctx context.Context, v *authz.Viewer, expires *time.Time, recheck time.Duration, reauth Reauthenticate) error {
	defer w.stop()
	w.user.Store(int64(v.UserID))
	if recheck <= 0 {
		recheck = DefaultRecheck
	}
	key := viewerKey(v)
	periodic := time.NewTicker(recheck)
	defer periodic.Stop()
	expiry := time.NewTimer(time.Hour)
	defer expiry.Stop()
	arm := func(at *time.Time) {
		expiry.Stop()
		if at != nil {
			expiry.Reset(time.Until(*at))
		}
	}
	arm(expires)
	for {
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-w.events:
			if !ok {
				return nil
			}
			if e.ID != v.UserID { // collected before the user was known
				continue
			}
		case <-expiry.C:
		case <-periodic.C:
		}
		now, at, err := reauth(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			return err
		case viewerKey(now) != key:
			return ErrViewerChanged
		}
		arm(at)
	}
}
