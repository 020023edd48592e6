package identity

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/internal/platform/ratekey"
)

// Login throttling: failed sign-ins are counted in Redis, so every replica sees the same
// counts, in fixed windows that start with the first failure.
const (
	// DefaultRateLimitPrefix starts the limiter's Redis keys:
	// virtflow:login:fail:user:<username> and virtflow:login:fail:ip:<address>.
	DefaultRateLimitPrefix = "virtflow:login:"
	// MaxFailuresPerAccount is how many failed logins an account may see per FailureWindow.
	MaxFailuresPerAccount = 5
	// MaxFailuresPerSource is how many failed logins one source address (an IPv4 address or
	// an IPv6 /64) may make per FailureWindow, whatever the accounts.
	MaxFailuresPerSource = 20
	// FailureWindow is how long failures are remembered.
	FailureWindow = 15 * time.Minute
)

// CodeRateLimited is the error code of a refused login attempt (HTTP 429 territory).
const CodeRateLimited apierr.Code = "RATE_LIMITED"

// reserveScript counts an attempt against both keys before the password is checked, unless a
// key has reached its limit: then it returns that key's index (1 or 2) and remaining time in
// milliseconds. Counting first means parallel attempts cannot overshoot the limits while their
// bcrypt comparisons run; a successful attempt gives its count back (releaseScript).
//
// KEYS: account key, source key. ARGV: account limit, source limit, window in milliseconds.
var reserveScript = redis.NewScript(`
local limits = {tonumber(ARGV[1]), tonumber(ARGV[2])}
for i = 1, 2 do
  if tonumber(redis.call('GET', KEYS[i]) or '0') >= limits[i] then
    local ttl = redis.call('PTTL', KEYS[i])
    if ttl < 0 then
      redis.call('PEXPIRE', KEYS[i], ARGV[3])
      ttl = tonumber(ARGV[3])
    end
    return {i, ttl}
  end
end
for i = 1, 2 do
  redis.call('INCR', KEYS[i])
  if redis.call('PTTL', KEYS[i]) < 0 then
    redis.call('PEXPIRE', KEYS[i], ARGV[3])
  end
end
return {0, 0}
`)

// releaseScript records a successful login: the account's failures are forgotten and the
// attempt counted against the source is given back. KEYS: account key, source key.
var releaseScript = redis.NewScript(`
redis.call('DEL', KEYS[1])
if tonumber(redis.call('GET', KEYS[2]) or '0') > 0 then
  redis.call('DECR', KEYS[2])
end
return 0
`)

// loginLimiter is the rate limiter of one login attempt.
type loginLimiter struct {
	rdb     *redis.Client
	account string // Redis key counting the account's failures
	source  string // Redis key counting the source's failures
}

func (s *Service) limiter(username, sourceIP string) loginLimiter {
	prefix := s.RateLimitPrefix
	if prefix == "" {
		prefix = DefaultRateLimitPrefix
	}
	return loginLimiter{
		rdb:     s.Redis,
		account: prefix + "fail:user:" + ratekey.Part(username),
		source:  prefix + "fail:ip:" + ratekey.Source(sourceIP),
	}
}

// reserve counts an attempt as failed in advance, or returns RATE_LIMITED when the account or
// the source has failed too often.
func (l loginLimiter) reserve(ctx context.Context) error {
	res, err := reserveScript.Run(ctx, l.rdb, []string{l.account, l.source},
		MaxFailuresPerAccount, MaxFailuresPerSource, FailureWindow.Milliseconds()).Int64Slice()
	if err != nil {
		return fmt.Errorf("identity: login rate limiter: %w", err)
	}
	if len(res) != 2 {
		return fmt.Errorf("identity: login rate limiter: unexpected answer %v", res)
	}
	if res[0] == 0 {
		return nil
	}
	return rateLimited(time.Duration(res[1]) * time.Millisecond)
}

// release records a successful attempt.
func (l loginLimiter) release(ctx context.Context) error {
	if err := releaseScript.Run(ctx, l.rdb, []string{l.account, l.source}).Err(); err != nil && err != redis.Nil {
		return fmt.Errorf("identity: login rate limiter: %w", err)
	}
	return nil
}

func rateLimited(wait time.Duration) *apierr.Error {
	minutes := int((wait + time.Minute - 1) / time.Minute)
	if minutes < 1 {
		minutes = 1
	}
	unit := "minutes"
	if minutes == 1 {
		unit = "minute"
	}
	return &apierr.Error{
		Code:    CodeRateLimited,
		Message: fmt.Sprintf("too many failed logins; try again in %d %s", minutes, unit),
		Extra:   map[string]any{"retryAfterSeconds": int((wait + time.Second - 1) / time.Second)},
	}
}
