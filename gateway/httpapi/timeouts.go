package httpapi

import (
	"context"
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
// [PaceBody]. The deadline ends with the body (net/http lifts it once the body has been
// read), so a slow handler's own work is not cut; websocket upgrades (subscriptions) have
// no body and are left alone.
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
	if !ok || idle <= 0 {
		return
	}
	b.idle = idle
	b.push(time.Now())
}

// deadlineBody is a request body whose reads, with idle set, move the connection's read
// deadline forward while bytes arrive.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	idle time.Duration // 0: the deadline set at the start holds
	last time.Time     // when the deadline was last pushed
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	// Pushing costs a little: do it when an eighth of the idle time has passed. Once the
	// body is over, net/http lifts the deadline itself (its check for a closed connection
	// reads on without one); a cut body keeps it, so that the server, which drains what is
	// left of a small body before answering, does not wait on the client either.
	if b.idle > 0 && n > 0 && err == nil {
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
