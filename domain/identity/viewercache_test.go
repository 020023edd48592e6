package identity

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/redis/go-redis/v9"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/rolebinding"
	"github.com/virtflow/virtflow/gateway/livestatus"
	"github.com/virtflow/virtflow/internal/testkit/poll"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// replica is one API process as internal/app wires it: a service with its viewer cache, fed
// by its own hub's Credentials events, and a log of the statements it sends.
type replica struct {
	svc   *Service
	cache *ViewerCache
	hub   *livestatus.Hub
	log   *queryLog
}

// replicas starts n replicas over the test database, their hubs subscribed to a channel of
// the test's own on a private Redis (testdb.PrivateRedis), and returns them with a client that publishes every
// change on that channel once committed (livestatus.Install, as every process has). The
// caches keep entries for an hour: only an event can make them let go within the test.
func replicas(t *testing.T, f *fixture, n int) ([]*replica, *ent.Client, *redis.Client) {
	t.Helper()
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
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	channel := "vftest:identity:events:" + strings.ToLower(rand.Text()[:12])
	writer := ent.NewClient(ent.Driver(entsql.OpenDB(dialect.Postgres, testDB.DB)))
	livestatus.Install(writer, rdb, quiet).Channel = channel
	var out []*replica
	for range n {
		client, log := countingClient()
		r := &replica{cache: &ViewerCache{TTL: time.Hour}, log: log}
		r.svc = &Service{Client: client, Log: quiet, Now: f.clock.Now, Cache: r.cache}
		r.hub = livestatus.NewHub(rdb, quiet)
		r.hub.Channel = channel
		r.hub.HealthCheck = 200 * time.Millisecond
		r.hub.Listeners = []livestatus.CredentialsListener{r.cache}
		if err := r.hub.Start(ctx); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out, writer, rdb
}

// authenticates authenticates plain on r and returns the viewer and the statements it sent.
func (r *replica) authenticate(t *testing.T, plain string) (*authz.Viewer, int, error) {
	t.Helper()
	r.log.reset()
	v, err := r.svc.Authenticate(context.Background(), plain, "192.0.2.10")
	return v, r.log.len(), err
}

// TestViewerCacheServesWithoutTheDatabase: the second request of a token reads nothing;
// what can change without an event is still checked on every request (expiry, source
// address).
func TestViewerCacheServesWithoutTheDatabase(t *testing.T) {
	f := newFixture(t)
	rs, _, _ := replicas(t, f, 1)
	r := rs[0]
	u := f.user("")
	f.bind(u, authz.RoleViewer, nil)
	plain, _ := f.token(u, expiresAt(f.clock.Now().Add(time.Hour)), cidrs("192.0.2.0/24"))
	if _, n, err := r.authenticate(t, plain); err != nil || n == 0 {
		t.Fatalf("first request: %d statements, %v", n, err)
	}
	v, n, err := r.authenticate(t, plain)
	if err != nil || n != 0 {
		t.Fatalf("second request: %d statements, %v; want none", n, err)
	}
	if v.UserID != u.ID || len(v.Bindings) != 1 {
		t.Fatalf("cached viewer %+v", v)
	}
	if _, err := r.svc.Authenticate(context.Background(), plain, "198.51.100.1"); err == nil {
		t.Fatal("a cached token was accepted from outside its allowed networks")
	}
	f.clock.Add(2 * time.Hour)
	_, err = r.svc.Authenticate(context.Background(), plain, "192.0.2.10")
	wantCode(t, err, apierr.CodeUnauthenticated)
}

// TestViewerCacheRevocationOnEveryReplica: a token revoked, a role granted and a user
// disabled through one replica take effect on the next request to every replica, though
// each had the token cached for an hour.
func TestViewerCacheRevocationOnEveryReplica(t *testing.T) {
	f := newFixture(t)
	rs, writer, _ := replicas(t, f, 2)
	u := f.user("")
	f.bind(u, authz.RoleViewer, nil)
	plain, tok := f.token(u)
	cacheAll := func() {
		t.Helper()
		for i, r := range rs {
			for range 2 {
				if _, err := r.svc.Authenticate(context.Background(), plain, "192.0.2.10"); err != nil {
					t.Fatalf("replica %d: %v", i, err)
				}
			}
			if _, n, _ := r.authenticate(t, plain); n != 0 {
				t.Fatalf("replica %d did not cache the token (%d statements)", i, n)
			}
		}
	}
	cacheAll()

	// A role granted: every replica's next viewer has it.
	tn := f.tenant()
	if _, err := writer.RoleBinding.Create().SetUser(u).SetTenant(tn).SetRole(rolebinding.RoleTenantAdmin).
		SetDomain(authz.TenantDomain(tn.ID)).Save(f.sys); err != nil {
		t.Fatal(err)
	}
	for i, r := range rs {
		poll.Until(t, 5*time.Second, func() error {
			v, err := r.svc.Authenticate(context.Background(), plain, "192.0.2.10")
			if err != nil {
				return err
			}
			if len(v.Bindings) != 2 {
				return fmt.Errorf("replica %d: bindings %v, want the new one too", i, v.Bindings)
			}
			return nil
		})
	}
	cacheAll()

	// The token revoked: every replica refuses it.
	if err := writer.APIToken.UpdateOneID(tok.ID).SetRevokedAt(f.clock.Now()).Exec(f.sys); err != nil {
		t.Fatal(err)
	}
	for i, r := range rs {
		poll.Until(t, 5*time.Second, func() error {
			if _, err := r.svc.Authenticate(context.Background(), plain, "192.0.2.10"); err == nil {
				return fmt.Errorf("replica %d still accepts the revoked token", i)
			}
			return nil
		})
	}
}

// TestViewerCacheOffWhileSubscriptionLost: when the hub's subscription drops, the cache is
// emptied and serves nothing until the subscription is back, so a change whose event was
// missed meanwhile is read from the database.
func TestViewerCacheOffWhileSubscriptionLost(t *testing.T) {
	f := newFixture(t)
	rs, _, rdb := replicas(t, f, 1)
	r := rs[0]
	u := f.user("")
	plain, tok := f.token(u)
	for range 2 {
		if _, _, err := r.authenticate(t, plain); err != nil {
			t.Fatal(err)
		}
	}
	if r.cache.Len() != 1 {
		t.Fatalf("cache holds %d tokens, want 1", r.cache.Len())
	}
	// Kill the subscription's connection: the hub notices and turns the cache off.
	if err := rdb.Do(context.Background(), "CLIENT", "KILL", "TYPE", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	// A revocation whose event nobody hears (written without the publisher).
	if err := testDB.Client.APIToken.UpdateOneID(tok.ID).SetRevokedAt(f.clock.Now()).Exec(f.sys); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 5*time.Second, func() error {
		if _, _, err := r.authenticate(t, plain); err == nil {
			return fmt.Errorf("the revoked token is still served from the cache")
		}
		return nil
	})
	// The hub subscribes again and the cache comes back on.
	other, _ := f.token(u)
	poll.Until(t, 10*time.Second, func() error {
		for range 2 {
			if _, _, err := r.authenticate(t, other); err != nil {
				return err
			}
		}
		if _, n, _ := r.authenticate(t, other); n != 0 {
			return fmt.Errorf("cache still off (%d statements)", n)
		}
		return nil
	})
}

// TestViewerCacheKeepsNothingReadBeforeAnInvalidation: an entry read before an event but
// stored after it is dropped, not served.
func TestViewerCacheKeepsNothingReadBeforeAnInvalidation(t *testing.T) {
	c := &ViewerCache{}
	c.SubscriptionChanged(true)
	owner := 7
	now := time.Now()
	gen := c.generation()
	c.ForgetUser(owner) // the event arrives while the row is being read
	c.put("h", gen, cachedToken{row: tokenRow{OwnerID: &owner}, read: now})
	if _, ok := c.get("h", now); ok {
		t.Fatal("an entry read before the invalidation was kept")
	}
	c.put("h", c.generation(), cachedToken{row: tokenRow{OwnerID: &owner}, read: now})
	if _, ok := c.get("h", now); !ok {
		t.Fatal("a current entry was not kept")
	}
	c.SubscriptionChanged(false)
	if _, ok := c.get("h", now); ok || c.Len() != 0 {
		t.Fatal("the cache served with its subscription lost")
	}
}
