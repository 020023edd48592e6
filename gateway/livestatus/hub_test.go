package livestatus_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/gateway/livestatus"
	"github.com/virtflow/virtflow/internal/testkit/poll"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// listener records what a hub tells its CredentialsListeners.
type listener struct {
	mu     sync.Mutex
	users  []int
	states []bool
}

func (l *listener) ForgetUser(u int) { l.mu.Lock(); l.users = append(l.users, u); l.mu.Unlock() }
func (l *listener) SubscriptionChanged(live bool) {
	l.mu.Lock()
	l.states = append(l.states, live)
	l.mu.Unlock()
}

func (l *listener) seen() ([]int, []bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]int(nil), l.users...), append([]bool(nil), l.states...)
}

// TestHubSubscribesAgain: when Redis drops the hub's subscription, the hub tells its
// listeners, subscribes again, tells them it is back, and its subscribers get the events
// published after that — Credentials events reaching the listeners first.
func TestHubSubscribesAgain(t *testing.T) {
	// A Redis of the test's own: the test drops its subscriptions (CLIENT KILL), which
	// would disturb the other packages' tests on the shared one.
	opts, err := redis.ParseURL(testdb.PrivateRedis(t))
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	l := &listener{}
	hub := livestatus.NewHub(rdb, slog.New(slog.NewTextHandler(io.Discard, nil)))
	hub.Channel = uniq("virtflow:live:hubtest")
	hub.HealthCheck = 200 * time.Millisecond
	hub.Listeners = []livestatus.CredentialsListener{l}
	if err := hub.Start(ctx); err != nil {
		t.Fatal(err)
	}
	events := hub.Subscribe(ctx, func(e livestatus.Event) bool { return e.Type == livestatus.Credentials })
	// A publisher needs no database to publish (Install only hooks the client).
	pub := livestatus.Install(ent.NewClient(), rdb, slog.New(slog.NewTextHandler(io.Discard, nil)))
	pub.Channel = hub.Channel
	delivered := func(user int) {
		t.Helper()
		pub.Publish(ctx, livestatus.Event{Type: livestatus.Credentials, ID: user})
		if e := receive(t, events); e.ID != user {
			t.Fatalf("delivered %+v, want user %d", e, user)
		}
		if users, _ := l.seen(); len(users) == 0 || users[len(users)-1] != user {
			t.Fatalf("listener saw users %v, want %d last (before the subscribers)", users, user)
		}
	}
	delivered(41)

	// Redis drops the subscription's connection.
	if err := rdb.Do(context.Background(), "CLIENT", "KILL", "TYPE", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 10*time.Second, func() error {
		if _, states := l.seen(); len(states) < 3 || !states[len(states)-1] {
			return fmt.Errorf("subscription states %v, want live, lost, live", states)
		}
		return nil
	})
	if _, states := l.seen(); !states[0] || states[1] {
		t.Fatalf("subscription states %v, want live, lost, live", states)
	}
	delivered(42)
}
