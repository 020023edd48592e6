package nodemonitor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// LeaseKey is the Redis key of the node monitor's lease.
const LeaseKey = "virtflow:nodemonitor:leader"

// renewScript extends the lease only for its holder.
var renewScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0`)

// releaseScript deletes the lease only for its holder.
var releaseScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("DEL", KEYS[1])
end
return 0`)

// Lease is one contender for a Redis lease.
type Lease struct {
	rdb redis.UniversalClient
	key string
	ttl time.Duration
	id  string
	log *slog.Logger

	mu      sync.Mutex
	leading bool
}

// NewLease returns a contender for key with period ttl; its id is random.
func NewLease(rdb redis.UniversalClient, key string, ttl time.Duration, log *slog.Logger) *Lease {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return &Lease{rdb: rdb, key: key, ttl: ttl, id: hex.EncodeToString(b), log: log}
}

// ID is the value this contender writes into the lease.
func (l *Lease) ID() string { return l.id }

// Leading reports whether this contender holds the lease now.
func (l *Lease) Leading() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.leading
}

func (l *Lease) setLeading(v bool) {
	l.mu.Lock()
	l.leading = v
	l.mu.Unlock()
}

// Run contends for the lease until ctx ends. While it holds the lease it runs lead with a
// context that is cancelled as soon as a renewal fails (lease lost, or Redis unreachable
// for longer than it can be sure of holding it) and waits for lead to return before
// contending again. On ctx's end it releases the lease.
func (l *Lease) Run(ctx context.Context, lead func(ctx context.Context)) {
	tick := l.ttl / 3
	for {
		ok, err := l.rdb.SetNX(ctx, l.key, l.id, l.ttl).Result()
		if err != nil && ctx.Err() == nil {
			l.log.Warn("contend for lease", "key", l.key, "err", err)
		}
		if ok {
			l.hold(ctx, lead, tick)
		}
		if ctx.Err() != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(tick):
		}
	}
}

// hold runs lead while renewing the lease every tick.
func (l *Lease) hold(ctx context.Context, lead func(ctx context.Context), tick time.Duration) {
	l.log.Info("acquired lease", "key", l.key, "id", l.id)
	l.setLeading(true)
	leadCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		lead(leadCtx)
	}()
	t := time.NewTicker(tick)
	defer t.Stop()
	for leadCtx.Err() == nil {
		select {
		case <-leadCtx.Done():
		case <-t.C:
			if err := l.renew(ctx); err != nil {
				l.log.Warn("lost lease", "key", l.key, "err", err)
				cancel()
			}
		}
	}
	cancel()
	<-done
	l.setLeading(false)
	// Release with a context of its own: ctx may be the one that ended.
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer rcancel()
	_ = releaseScript.Run(rctx, l.rdb, []string{l.key}, l.id).Err()
}

// errNotHolder is a renewal refused because another contender holds the lease.
var errNotHolder = errors.New("lease held by another process")

func (l *Lease) renew(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(ctx, l.ttl/3)
	defer cancel()
	n, err := renewScript.Run(rctx, l.rdb, []string{l.key}, l.id, l.ttl.Milliseconds()).Int()
	if err != nil {
		return fmt.Errorf("renew: %w", err)
	}
	if n == 0 {
		return errNotHolder
	}
	return nil
}
