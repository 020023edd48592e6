package infra

import (
	"context"
	"fmt"
	neturl "net/url"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// Redis is a connection to the Redis that carries the task queue and pub/sub, and the
// in-process server behind it when none was configured.
type Redis struct {
	Client *redis.Client
	// Asynq reaches the same Redis for the task queue: a asynq.RedisClientOpt, or a
	// asynq.RedisFailoverClientOpt behind Sentinel.
	Asynq asynq.RedisConnOpt
	// Namespace sets this deployment's channels and keys apart from another's on the same
	// Redis server (Key). Pub/sub channels are shared by every database of a Redis server, so
	// without it two deployments on databases 0 and 1 would hear each other's live-status,
	// placement and credential events.
	Namespace string
	db        int
	embedded  *miniredis.Miniredis
}

// Key is the name of a channel or key of this deployment: "virtflow:" + name on database 0
// with no namespace set (the names of earlier versions), otherwise
// "virtflow:<namespace>:" + name, the namespace defaulting to "db<N>" for database N.
func (r *Redis) Key(name string) string {
	ns := r.Namespace
	if ns == "" && r.db != 0 {
		ns = fmt.Sprintf("db%d", r.db)
	}
	if ns == "" {
		return "virtflow:" + name
	}
	return "virtflow:" + ns + ":" + name
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
//
// A URL with a master_name parameter names a Sentinel-managed master instead, e.g.
// redis://sentinel-a:26379/0?master_name=virtflow&addr=sentinel-b:26379&addr=sentinel-c:26379
// (go-redis' failover URL: the host and each addr are Sentinels; the user and password are
// the Sentinels' and, unless the master has its own, the master's). Clients then follow
// failovers to the new master.
//
// Channel and key names come from Key: see Namespace; OpenRedisNamespace sets it.
func OpenRedis(ctx context.Context, url string) (*Redis, error) {
	return OpenRedisNamespace(ctx, url, "")
}

// OpenRedisNamespace is OpenRedis with the deployment's namespace (config's RedisNamespace;
// empty: named after the database number).
func OpenRedisNamespace(ctx context.Context, url, namespace string) (*Redis, error) {
	var mr *miniredis.Miniredis
	if url == "" {
		var err error
		if mr, err = miniredis.Run(); err != nil {
			return nil, fmt.Errorf("start in-process redis: %w", err)
		}
		url = "redis://" + mr.Addr()
	}
	r, where, err := redisClient(url)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	r.embedded, r.Namespace = mr, namespace
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := r.Ping(pingCtx); err != nil {
		_ = r.Close()
		return nil, fmt.Errorf("connect to redis at %s: %w", where, err)
	}
	return r, nil
}

// redisClient builds the clients of url, and says where it points for error messages.
func redisClient(raw string) (*Redis, string, error) {
	u, err := neturl.Parse(raw)
	if err != nil {
		return nil, "", err
	}
	if u.Query().Get("master_name") != "" {
		fo, err := redis.ParseFailoverURL(raw)
		if err != nil {
			return nil, "", err
		}
		if fo.Username == "" && fo.Password == "" {
			fo.Username, fo.Password = fo.SentinelUsername, fo.SentinelPassword
		}
		return &Redis{
			Client: redis.NewFailoverClient(fo),
			Asynq: asynq.RedisFailoverClientOpt{MasterName: fo.MasterName, SentinelAddrs: fo.SentinelAddrs,
				SentinelUsername: fo.SentinelUsername, SentinelPassword: fo.SentinelPassword,
				Username: fo.Username, Password: fo.Password, DB: fo.DB, TLSConfig: fo.TLSConfig},
			db: fo.DB,
		}, fmt.Sprintf("master %s of sentinels %v", fo.MasterName, fo.SentinelAddrs), nil
	}
	opts, err := redis.ParseURL(raw)
	if err != nil {
		return nil, "", err
	}
	return &Redis{
		Client: redis.NewClient(opts),
		Asynq: asynq.RedisClientOpt{Addr: opts.Addr, Username: opts.Username, Password: opts.Password,
			DB: opts.DB, TLSConfig: opts.TLSConfig},
		db: opts.DB,
	}, opts.Addr, nil
}
