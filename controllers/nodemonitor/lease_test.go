package nodemonitor_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/virtflow/virtflow/controllers/nodemonitor"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/testkit/poll"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// contender runs a lease in the background and records when it leads.
type contender struct {
	lease  *nodemonitor.Lease
	cancel context.CancelFunc
	done   chan struct{}
	leads  atomic.Int32
}

func contend(t *testing.T, url, key string, ttl time.Duration, active, maxActive *atomic.Int32) *contender {
	t.Helper()
	rd, err := infra.OpenRedis(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rd.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	c := &contender{lease: nodemonitor.NewLease(rd.Client, key, ttl, quiet()), cancel: cancel, done: make(chan struct{})}
	t.Cleanup(c.stop)
	go func() {
		defer close(c.done)
		c.lease.Run(ctx, func(ctx context.Context) {
			c.leads.Add(1)
			n := active.Add(1)
			for {
				if m := maxActive.Load(); n <= m || maxActive.CompareAndSwap(m, n) {
					break
				}
			}
			<-ctx.Done()
			active.Add(-1)
		})
	}()
	return c
}

func (c *contender) stop() {
	c.cancel()
	<-c.done
}

// waitFor polls cond until it holds, failing after 20 s (poll.Until).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	poll.Until(t, 20*time.Second, func() error {
		if cond() {
			return nil
		}
		return fmt.Errorf("waiting for %s", what)
	})
}

var leaseSeq atomic.Int64

// TestLeaderFailover on the real Redis: of two contenders exactly one leads; when it stops,
// the other takes over; when a leader dies without releasing (its key left behind), a
// contender takes over once the lease expires. Never two leaders at once.
func TestLeaderFailover(t *testing.T) {
	key := fmt.Sprintf("virtflow:test:lease:%d:%d", time.Now().UnixNano(), leaseSeq.Add(1))
	const ttl = 600 * time.Millisecond
	var active, maxActive atomic.Int32
	a := contend(t, testdb.RedisURL(), key, ttl, &active, &maxActive)
	b := contend(t, testdb.RedisURL(), key, ttl, &active, &maxActive)
	waitFor(t, "a leader", func() bool { return a.lease.Leading() || b.lease.Leading() })
	leader, other := a, b
	if b.lease.Leading() {
		leader, other = b, a
	}
	if other.lease.Leading() {
		t.Fatal("both contenders lead")
	}
	leader.stop()
	waitFor(t, "the other contender to take over", other.lease.Leading)

	// A leader that dies keeps its key until it expires: simulate one.
	other.stop()
	rd, err := infra.OpenRedis(context.Background(), testdb.RedisURL())
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if err := rd.Client.Set(context.Background(), key, "a-dead-process", ttl).Err(); err != nil {
		t.Fatal(err)
	}
	c := contend(t, testdb.RedisURL(), key, ttl, &active, &maxActive)
	waitFor(t, "a contender to take over from a dead leader", c.lease.Leading)
	if got := rd.Client.Get(context.Background(), key).Val(); got != c.lease.ID() {
		t.Fatalf("lease holds %q, want the new leader %q", got, c.lease.ID())
	}
	if maxActive.Load() != 1 {
		t.Fatalf("%d leaders ran at once", maxActive.Load())
	}
}

// TestLeaseEmbeddedRedis: the lease works on the in-process Redis of the embedded mode.
func TestLeaseEmbeddedRedis(t *testing.T) {
	rd, err := infra.OpenRedis(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	l := nodemonitor.NewLease(rd.Client, nodemonitor.LeaseKey, time.Second, quiet())
	led := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		l.Run(ctx, func(ctx context.Context) { close(led); <-ctx.Done() })
	}()
	select {
	case <-led:
	case <-time.After(20 * time.Second):
		t.Fatal("never led on the embedded Redis")
	}
	cancel()
	wg.Wait()
	if n := rd.Client.Exists(context.Background(), nodemonitor.LeaseKey).Val(); n != 0 {
		t.Fatalf("lease not released on stop")
	}
}
