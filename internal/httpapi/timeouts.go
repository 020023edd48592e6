package httpapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"
)

// Default HTTP timeouts (config: --http-*-timeout, VIRTFLOW_HTTP_*_TIMEOUT).
const (
	// DefaultReadHeaderTimeout bounds the wait for a request's headers.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultBodyTimeout bounds the wait for a whole request body (a GraphQL query is at
	// most MaxRequestBytes), except image uploads, which have an idle timeout instead.
	DefaultBodyTimeout = 30 * time.Second
	// DefaultIdleTimeout is how long a keep-alive connection waits for its next request.
	DefaultIdleTimeout = 2 * time.Minute
)

// bodyKey holds a request's *deadlineBody in its context.
type bodyKey struct{}

// BodyDeadline gives the body of every request d to arrive (when d > 0): a client that sends
// it slower (a slow-loris) has its read cut and its connection closed, instead of holding a
// server goroutine, and whatever the handler holds, for as long as it likes. A handler that
// takes long bodies (an image upload) switches its request to an idle deadline with
// [PaceBody]. The deadline is lifted once the body has been read, so a slow handler's own
// work is not cut; websocket upgrades (subscriptions) have no body and are left alone.
//
// It must wrap the handler the http.Server calls, so that the read deadline reaches the
// connection (http.ResponseController).
func BodyDeadline(d time.Duration, next http.Handler) http.Handler {
	if d <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || r.Header.Get("Upgrade") != "" {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		now := time.Now()
		if err := rc.SetReadDeadline(now.Add(d)); err != nil {
			next.ServeHTTP(w, r) // not a server connection (a test recorder)
			return
		}
		b := &deadlineBody{ReadCloser: r.Body, rc: rc, last: now}
		r = r.WithContext(context.WithValue(r.Context(), bodyKey{}, b))
		r.Body = b
		next.ServeHTTP(w, r)
	})
}

// PaceBody switches the body deadline of r (set by BodyDeadline) to an idle one: the read is
// cut when no byte arrived for idle, however long the whole body takes. Without
// BodyDeadline it does nothing.
func PaceBody(r *http.Request, idle time.Duration) {
	b, ok := r.Context().Value(bodyKey{}).(*deadlineBody)
	if !ok || idle <= 0 || b.done {
		return
	}
	b.idle = idle
	b.push(time.Now())
}

// deadlineBody is a request body whose reads move the connection's read deadline: with
// idle set, forward while bytes arrive; at the end of the body it is lifted.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	idle time.Duration // 0: the deadline set at the start holds
	last time.Time     // when the deadline was last pushed
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err != nil && !errors.Is(err, io.EOF):
		// Cut (or broken): the deadline stays, so that the server, which drains what is
		// left of a small body before answering, does not wait on the client either.
	case err != nil:
		// The body is over: lift the deadline so that the server's check for a closed
		// connection, which reads on, does not cancel a slow handler's context.
		if !b.done {
			b.done = true
			_ = b.rc.SetReadDeadline(time.Time{})
		}
	case b.idle > 0 && n > 0:
		// Pushing costs a little: do it when an eighth of the idle time has passed.
		if now := time.Now(); now.Sub(b.last) >= b.idle/8 {
			b.push(now)
		}
	}
	return n, err
}

func (b *deadlineBody) push(now time.Time) {
	b.last = now
	_ = b.rc.SetReadDeadline(now.Add(b.idle))
}
