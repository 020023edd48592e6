package livestatus

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/redis/go-redis/v9"
)

// subscriberBuffer is how many events a slow subscriber may fall behind before events
// for it are dropped (and counted in Dropped).
const subscriberBuffer = 256

// Hub is a process's one subscription to the events channel, fanned out to its local subscribers.
type Hub struct {
	// Channel is the channel subscribed to (default Channel); set it before Start.
	Channel string

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

// Start subscribes to h.Channel and returns once Redis confirmed the subscription; events
// are then dispatched until ctx ends. go-redis re-subscribes by itself after a lost
// connection (events published meanwhile are missed).
func (h *Hub) Start(ctx context.Context) error {
	ps := h.rdb.Subscribe(ctx, h.Channel)
	if _, err := ps.Receive(ctx); err != nil {
		_ = ps.Close()
		return fmt.Errorf("subscribe to %s: %w", h.Channel, err)
	}
	msgs := ps.Channel(redis.WithChannelSize(1024))
	go func() {
		defer ps.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case m, ok := <-msgs:
				if !ok {
					return
				}
				if e, ok := decode(m.Payload); ok {
					h.dispatch(e)
				}
			}
		}
	}()
	return nil
}

func (h *Hub) dispatch(e Event) {
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

func (h *Hub) subscribe(ctx context.Context, s *subscriber) <-chan Event {
	h.mu.Lock()
	h.subs[s] = struct{}{}
	h.mu.Unlock()
	go func() {
		<-ctx.Done()
		h.mu.Lock()
		delete(h.subs, s)
		close(s.ch)
		h.mu.Unlock()
	}()
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
