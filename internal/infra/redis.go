package infra

import (
	"context"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// Redis is a connection to the Redis that carries the task queue and pub/sub, and the
// in-process server behind it when none was configured.
type Redis struct {
	Client   *redis.Client
	Asynq    asynq.RedisClientOpt
	embedded *miniredis.Miniredis
}

// Embedded reports whether this Redis runs inside the process.
func (r *Redis) Embedded() bool { return r.embedded != nil }

// Ping checks Redis answers.
func (r *Redis) Ping(ctx context.Context) error { return r.Client.Ping(ctx).Err() }

// Close closes the client and stops the in-process server, if any.
func (r *Redis) Close() error {
	err := r.Client.Close()
	if r.embedded != nil {
		r.embedded.Close()
	}
	return err
}

// OpenRedis connects to url, or starts an in-process Redis on a loopback port when url is
// empty. The in-process Redis keeps nothing across restarts; work is not lost with it because
// the database, not Redis, is the record of what was accepted.
func OpenRedis(ctx context.Context, url string) (*Redis, error) {
	var mr *miniredis.Miniredis
	if url == "" {
		var err error
		if mr, err = miniredis.Run(); err != nil {
			return nil, fmt.Errorf("start in-process redis: %w", err)
		}
		url = "redis://" + mr.Addr()
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	r := &Redis{
		Client: redis.NewClient(opts),
		Asynq: asynq.RedisClientOpt{Addr: opts.Addr, Username: opts.Username, Password: opts.Password,
			DB: opts.DB, TLSConfig: opts.TLSConfig},
		embedded: mr,
	}
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := r.Ping(pingCtx); err != nil {
		_ = r.Close()
		return nil, fmt.Errorf("connect to redis at %s: %w", opts.Addr, err)
	}
	return r, nil
}
