package identity

import (
	"context"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
)

// DefaultSessionTTL is how long a session token made by Login lasts unless
// Service.SessionTTL says otherwise.
const DefaultSessionTTL = 12 * time.Hour

// Component is the name of the system viewer the service acts as once it has checked what
// the caller may do ("system:identity" in logs and audit rows).
const Component = "identity"

// Service authenticates requests and manages users' credentials and role bindings. The zero
// values of Log, Now, SessionTTL and RateLimitPrefix mean their defaults; Client is required,
// and Redis is required by Login.
type Service struct {
	Client *ent.Client
	Redis  *redis.Client
	Log    *slog.Logger
	// Now is the clock (time.Now when nil); tests move it.
	Now func() time.Time
	// SessionTTL is the lifetime of a session token (DefaultSessionTTL when zero).
	SessionTTL time.Duration
	// RateLimitPrefix starts the Redis keys of the login rate limiter
	// (DefaultRateLimitPrefix when empty); tests use their own.
	RateLimitPrefix string
	// Cache, when set, spares Authenticate the database for a token it read moments ago;
	// it must receive the process's Credentials events (livestatus.Hub.Listeners). Nil
	// reads the database on every call.
	Cache *ViewerCache
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

func (s *Service) sessionTTL() time.Duration {
	if s.SessionTTL > 0 {
		return s.SessionTTL
	}
	return DefaultSessionTTL
}

// system is ctx acting as the identity component, for the database work the service does
// after checking the caller's permissions itself.
func system(ctx context.Context) context.Context {
	return authz.SystemContext(ctx, Component)
}

// viewer returns the viewer of ctx, or UNAUTHENTICATED when there is none.
func viewer(ctx context.Context) (*authz.Viewer, error) {
	v := authz.FromContext(ctx)
	if v == nil {
		return nil, apierr.Unauthenticated("sign in: send Authorization: Bearer <token>")
	}
	return v, nil
}

// writer returns the viewer of ctx when it may change anything at all: signed in, and not
// through a read-only token.
func writer(ctx context.Context) (*authz.Viewer, error) {
	v, err := viewer(ctx)
	if err != nil {
		return nil, err
	}
	if v.ReadOnly {
		return nil, apierr.Forbidden("this token is read-only")
	}
	return v, nil
}

// db returns the client of the transaction ctx carries (a GraphQL mutation runs in one), or
// s.Client: identity changes then commit or roll back together with their audit rows.
func (s *Service) db(ctx context.Context) *ent.Client {
	if c := ent.FromContext(ctx); c != nil {
		return c
	}
	return s.Client
}
