package identity

import (
	"context"
	"fmt"
	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent/apitoken"
	"github.com/virtflow/virtflow/internal/platform/ratekey"
)

const goodPassword = "correct horse battery staple"

func TestLogin(t *testing.T) {
	f := newFixture(t).withRedis()
	ctx := context.Background()
	u := f.user(goodPassword)

	plain, tok, err := f.svc.Login(ctx, u.Username, goodPassword, "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	now := f.clock.Now()
	if !tokenFormat.MatchString(plain) {
		t.Fatalf("session token %q", plain)
	}
	if tok.Kind != apitoken.KindSession || tok.Scope != apitoken.ScopeReadWrite ||
		tok.ExpiresAt == nil || !tok.ExpiresAt.Equal(now.Add(12*time.Hour)) ||
		!strings.HasPrefix(tok.Name, "session ") || tok.Prefix != plain[:10] || tok.TokenHash != HashToken(plain) {
		t.Fatalf("session token row %+v", tok)
	}
	if tok.Edges.Owner == nil || tok.Edges.Owner.ID != u.ID {
		t.Fatalf("owner not loaded: %+v", tok.Edges)
	}
	got, err := testDB.Client.User.Get(f.sys, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.LastLoginAt == nil || !got.LastLoginAt.Equal(now) {
		t.Fatalf("last_login_at = %v, want %v", got.LastLoginAt, now)
	}
	v := mustAuth(t, f, plain)
	if v.UserID != u.ID || v.ReadOnly {
		t.Fatalf("session viewer %+v", v)
	}
	f.clock.Add(12 * time.Hour)
	f.wantRefused(plain, "192.0.2.1")
}

func TestLoginFailuresLookAlike(t *testing.T) {
	f := newFixture(t).withRedis()
	ctx := context.Background()
	u := f.user(goodPassword)
	off := f.user(goodPassword, disabled)
	nopw := f.user("")

	cases := []struct{ name, user, pw string }{
		{"unknown user", unique("nobody"), goodPassword},
		{"wrong password", u.Username, goodPassword + "!"},
		{"empty password", u.Username, ""},
		{"disabled user", off.Username, goodPassword},
		{"user without password", nopw.Username, ""},
	}
	var durations []time.Duration
	for i, c := range cases {
		start := time.Now()
		plain, tok, err := f.svc.Login(ctx, c.user, c.pw, fmt.Sprintf("192.0.2.%d", 10+i))
		durations = append(durations, time.Since(start))
		if plain != "" || tok != nil {
			t.Fatalf("%s: logged in", c.name)
		}
		e := wantCode(t, err, apierr.CodeUnauthenticated)
		if e.Message != "invalid username or password" {
			t.Fatalf("%s: message %q", c.name, e.Message)
		}
	}
	// Each failure costs a bcrypt comparison, known user or not.
	for i, d := range durations {
		if d < durations[1]/3 {
			t.Errorf("%s took %v, a wrong password %v", cases[i].name, d, durations[1])
		}
	}
}

func TestLoginRateLimitPerAccount(t *testing.T) {
	f := newFixture(t).withRedis()
	ctx := context.Background()
	u := f.user(goodPassword)
	other := f.user(goodPassword)

	for i := range MaxFailuresPerAccount {
		_, _, err := f.svc.Login(ctx, u.Username, "wrong password!", fmt.Sprintf("198.51.100.%d", i+1))
		wantCode(t, err, apierr.CodeUnauthenticated)
	}
	// The 6th attempt is refused, even with the right password and from another address.
	start := time.Now()
	_, _, err := f.svc.Login(ctx, u.Username, goodPassword, "203.0.113.9")
	e := wantCode(t, err, CodeRateLimited)
	if !strings.HasPrefix(e.Message, "too many failed logins; try again in ") || !strings.HasSuffix(e.Message, "15 minutes") {
		t.Fatalf("message %q", e.Message)
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("a throttled attempt took %v: the password was checked", d)
	}
	// Other accounts are not affected.
	if _, _, err := f.svc.Login(ctx, other.Username, goodPassword, "198.51.100.1"); err != nil {
		t.Fatalf("another account: %v", err)
	}
	// The counter lives in Redis under the documented key, with the window as its lifetime.
	key := f.svc.RateLimitPrefix + "fail:user:" + u.Username
	if n, err := f.svc.Redis.Get(ctx, key).Int(); err != nil || n != MaxFailuresPerAccount {
		t.Fatalf("%s = %d, %v", key, n, err)
	}
	if ttl := f.svc.Redis.TTL(ctx, key).Val(); ttl <= 14*time.Minute || ttl > FailureWindow {
		t.Fatalf("TTL of %s = %v", key, ttl)
	}
}

func TestLoginRateLimitPerSource(t *testing.T) {
	f := newFixture(t).withRedis()
	ctx := context.Background()
	u := f.user(goodPassword)
	const ip = "198.51.100.77"

	// 20 failures from one address, over many accounts (in parallel: the limiter must hold).
	var wg sync.WaitGroup
	errs := make(chan error, MaxFailuresPerSource)
	for range MaxFailuresPerSource {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := f.svc.Login(ctx, unique("guess"), "wrong password!", ip)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		wantCode(t, err, apierr.CodeUnauthenticated)
	}
	_, _, err := f.svc.Login(ctx, u.Username, goodPassword, ip)
	wantCode(t, err, CodeRateLimited)
	// An IPv6 /64 counts as one source.
	if ratekey.Source("2001:db8:1:2::1") != ratekey.Source("2001:db8:1:2:ffff::9") || ratekey.Source("2001:db8:1:3::1") == ratekey.Source("2001:db8:1:2::1") {
		t.Fatal("IPv6 sources are not grouped by /64")
	}
	// Other addresses are not affected.
	if _, _, err := f.svc.Login(ctx, u.Username, goodPassword, "198.51.100.78"); err != nil {
		t.Fatalf("another address: %v", err)
	}
}

func TestLoginRateLimitParallel(t *testing.T) {
	f := newFixture(t).withRedis()
	ctx := context.Background()
	u := f.user(goodPassword)

	// Parallel guesses cannot get more than MaxFailuresPerAccount password checks.
	const n = 12
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[apierr.Code]int{}
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := f.svc.Login(ctx, u.Username, "wrong password!", fmt.Sprintf("198.51.100.%d", 100+i))
			e, _ := apierr.As(err)
			mu.Lock()
			codes[e.Code]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if codes[apierr.CodeUnauthenticated] != MaxFailuresPerAccount || codes[CodeRateLimited] != n-MaxFailuresPerAccount {
		t.Fatalf("outcomes %v, want %d UNAUTHENTICATED and the rest RATE_LIMITED", codes, MaxFailuresPerAccount)
	}
}

func TestLoginSuccessResetsAccountCount(t *testing.T) {
	f := newFixture(t).withRedis()
	ctx := context.Background()
	u := f.user(goodPassword)
	fail := func() {
		t.Helper()
		_, _, err := f.svc.Login(ctx, u.Username, "wrong password!", "192.0.2.50")
		wantCode(t, err, apierr.CodeUnauthenticated)
	}
	for range MaxFailuresPerAccount - 1 {
		fail()
	}
	if _, _, err := f.svc.Login(ctx, u.Username, goodPassword, "192.0.2.50"); err != nil {
		t.Fatal(err)
	}
	// Without the reset, the next failure would be the 5th and the one after refused.
	for range MaxFailuresPerAccount - 1 {
		fail()
	}
	if _, _, err := f.svc.Login(ctx, u.Username, goodPassword, "192.0.2.50"); err != nil {
		t.Fatalf("after a success and %d failures: %v", MaxFailuresPerAccount-1, err)
	}
	// The source counts only the failures.
	key := f.svc.RateLimitPrefix + "fail:ip:192.0.2.50"
	if n, err := f.svc.Redis.Get(ctx, key).Int(); err != nil || n != 2*(MaxFailuresPerAccount-1) {
		t.Fatalf("%s = %d, %v; want %d", key, n, err, 2*(MaxFailuresPerAccount-1))
	}
}

func TestLoginNeedsRedis(t *testing.T) {
	f := newFixture(t)
	if _, _, err := f.svc.Login(context.Background(), "x", "y", ""); err == nil {
		t.Fatal("Login without Redis succeeded")
	}
}

// TestLoginWithRedisDown: when the Redis that counts failed logins is unreachable, login fails
// closed — the right password does not get a session, since the limits cannot be enforced —
// with an error, not a panic, and no session token is written.
func TestLoginWithRedisDown(t *testing.T) {
	f := newFixture(t)
	mr := miniredis.RunT(t)
	f.svc.Redis = redis.NewClient(&redis.Options{Addr: mr.Addr(), MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = f.svc.Redis.Close() })
	mr.Close()
	u := f.user("correct horse battery")
	before := testDB.Client.APIToken.Query().CountX(f.sys)
	plain, tok, err := f.svc.Login(context.Background(), u.Username, "correct horse battery", "192.0.2.7")
	if err == nil || plain != "" || tok != nil {
		t.Fatalf("Login with Redis down = %q, %v, %v; want an error and no token", plain, tok, err)
	}
	if after := testDB.Client.APIToken.Query().CountX(f.sys); after != before {
		t.Errorf("api_tokens went from %d to %d rows: a session was written", before, after)
	}
}
