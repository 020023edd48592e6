package livestatus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/redis/go-redis/v9"
)

// subscriberBuffer is how many events a slow subscriber may fall behind before events
// for it are dropped (and counted in Dropped).
const subscriberBuffer = 256

// Hub is a process's one subscription to the events channel, fanned out to its local subscribers.
type Hub struct {
	// Channel is the channel subscribed to (default Channel); set it before Start.
	Channel string
	// Listeners learn of every Credentials event before any subscriber does, and of every
	// moment the subscription was lost or confirmed again; set them before Start.
	Listeners []CredentialsListener
	// HealthCheck is how long the subscription may stay silent before the hub pings Redis
	// to learn whether it is still there (DefaultHealthCheck when zero).
	HealthCheck time.Duration

	rdb redis.UniversalClient
	log *slog.Logger

	mu      sync.Mutex
	subs    map[*subscriber]struct{}
	dropped int
	seq     uint64
	reads   *sharedReads
}

type subscriber struct {
	match func(Event) bool
	ch    chan Event
	// credentials marks a connection's CredentialWatch, not counted in Subscribers.
	credentials bool
}

// NewHub returns a hub over rdb; Start it before subscribing.
func NewHub(rdb redis.UniversalClient, log *slog.Logger) *Hub {
	return &Hub{Channel: Channel, rdb: rdb, log: log, subs: map[*subscriber]struct{}{}, reads: newSharedReads()}
}

// DefaultHealthCheck is how long a hub's subscription may stay silent before the hub pings.
const DefaultHealthCheck = 3 * time.Second

// CredentialsListener is told by a Hub of every Credentials event, and of every moment the
// hub may have missed some (identity.ViewerCache).
type CredentialsListener interface {
	// ForgetUser: what the user's tokens grant may have changed.
	ForgetUser(user int)
	// SubscriptionChanged: the subscription was confirmed (live) or lost; events published
	// in between were missed.
	SubscriptionChanged(live bool)
}

// Start subscribes to h.Channel and returns once Redis confirmed the subscription; events
// are then dispatched until ctx ends. A lost subscription (an error, or a ping unanswered
// for a HealthCheck period) is replaced by a new one, retried with backoff; events
// published meanwhile are missed, and the hub tells its Listeners when the subscription is
// lost and when it is confirmed again.
func (h *Hub) Start(ctx context.Context) error {
	ps := h.rdb.Subscribe(ctx, h.Channel)
	if _, err := ps.Receive(ctx); err != nil {
		_ = ps.Close()
		return fmt.Errorf("subscribe to %s: %w", h.Channel, err)
	}
	h.subscription(true)
	go h.run(ctx, ps)
	return nil
}

// run dispatches the messages of ps and of the subscriptions that replace it, until ctx
// ends.
func (h *Hub) run(ctx context.Context, ps *redis.PubSub) {
	for {
		err := h.receive(ctx, ps)
		_ = ps.Close()
		h.subscription(false)
		if ctx.Err() != nil {
			return
		}
		h.log.Warn("livestatus: subscription lost; events are missed until it is back", "err", err)
		retry := backoff.NewExponentialBackOff()
		retry.InitialInterval, retry.MaxInterval = 100*time.Millisecond, 5*time.Second
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(retry.NextBackOff()):
			}
			ps = h.rdb.Subscribe(ctx, h.Channel)
			if _, err := ps.ReceiveTimeout(ctx, h.healthCheck()); err == nil {
				break
			}
			_ = ps.Close()
		}
		h.subscription(true)
		h.log.Info("livestatus: subscription back")
	}
}

func (h *Hub) healthCheck() time.Duration {
	if h.HealthCheck > 0 {
		return h.HealthCheck
	}
	return DefaultHealthCheck
}

// receive dispatches the messages of ps until ctx ends or the subscription is lost: an
// error, or a ping (sent after a silent HealthCheck period) left unanswered for another.
func (h *Hub) receive(ctx context.Context, ps *redis.PubSub) error {
	pinged := false
	for {
		msg, err := ps.ReceiveTimeout(ctx, h.healthCheck())
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var ne net.Error
		switch {
		case err != nil && errors.As(err, &ne) && ne.Timeout() && !pinged:
			if err := ps.Ping(ctx); err != nil {
				return err
			}
			pinged = true
			continue
		case err != nil && errors.As(err, &ne) && ne.Timeout():
			return errors.New("no answer to a ping")
		case err != nil:
			return err
		}
		pinged = false
		if m, ok := msg.(*redis.Message); ok {
			if e, ok := decode(m.Payload); ok {
				h.dispatch(e)
			}
		}
	}
}

// subscription tells the listeners that the subscription was confirmed or lost.
func (h *Hub) subscription(live bool) {
	for _, l := range h.Listeners {
		l.SubscriptionChanged(live)
	}
}

func (h *Hub) dispatch(e Event) {
	if e.Type == Credentials {
		for _, l := range h.Listeners {
			l.ForgetUser(e.ID)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	e.seq = h.seq
	h.reads.forget(h.seq)
	for s := range h.subs {
		if !s.match(e) {
			continue
		}
		select {
		case s.ch <- e:
		default:
			h.dropped++
		}
	}
}

// Subscribe returns the events match accepts, until ctx ends; then the channel closes.
func (h *Hub) Subscribe(ctx context.Context, match func(Event) bool) <-chan Event {
	return h.subscribe(ctx, &subscriber{match: match, ch: make(chan Event, subscriberBuffer)})
}

// subscribe adds s until ctx ends, then removes it and closes its channel. The removal is
// a context.AfterFunc rather than a goroutine waiting on ctx: a server holds one or two
// subscriptions per websocket connection (every node agent has one), and a parked
// goroutine each is a stack each.
func (h *Hub) subscribe(ctx context.Context, s *subscriber) <-chan Event {
	h.mu.Lock()
	h.subs[s] = struct{}{}
	h.mu.Unlock()
	context.AfterFunc(ctx, func() {
		h.mu.Lock()
		delete(h.subs, s)
		close(s.ch)
		h.mu.Unlock()
	})
	return s.ch
}

// Subscribers is the number of local subscribers, credential watches not counted.
func (h *Hub) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for s := range h.subs {
		if !s.credentials {
			n++
		}
	}
	return n
}

// Dropped is how many events were dropped because a subscriber fell too far behind.
func (h *Hub) Dropped() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.dropped
}

type hubKey struct{}

// NewContext returns ctx carrying the hub, for the subscription resolvers.
func NewContext(ctx context.Context, h *Hub) context.Context {
	return context.WithValue(ctx, hubKey{}, h)
}

// FromContext returns the hub of ctx, or nil.
func FromContext(ctx context.Context) *Hub {
	h, _ := ctx.Value(hubKey{}).(*Hub)
	return h
}
