package identity

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/apitoken"
	"github.com/virtflow/virtflow/ent/rolebinding"
	"github.com/virtflow/virtflow/ent/user"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// testDB is the package's migrated database, shared by all tests; fixtures get unique names.
var testDB *infra.Database

func TestMain(m *testing.M) {
	testdb.MainFunc(m, func(dsn string) int {
		db, err := infra.OpenDatabase(context.Background(), dsn, "")
		if err != nil {
			fmt.Fprintln(os.Stderr, "identity tests:", err)
			return 1
		}
		defer db.Close()
		testDB = db
		return m.Run()
	})
}

// clock is a settable clock for Service.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock {
	// PostgreSQL keeps microseconds; a clock on a whole second compares equal after a round trip.
	return &clock{t: time.Now().Truncate(time.Second)}
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// fixture is a service over the test database with a settable clock, and helpers to make
// users, tenants, bindings and tokens directly (as the system).
type fixture struct {
	t     testing.TB
	svc   *Service
	clock *clock
	sys   context.Context
	// db is where the helpers make rows: testDB.Client unless a test says otherwise.
	db *ent.Client
}

var seq atomic.Int64

func unique(base string) string { return fmt.Sprintf("%s-%d", base, seq.Add(1)) }

func newFixture(t testing.TB) *fixture {
	t.Helper()
	testdb.DSN(t) // skips when PostgreSQL is unavailable and skipping allowed
	c := newClock()
	return &fixture{
		t:     t,
		clock: c,
		sys:   authz.SystemContext(context.Background(), "test"),
		db:    testDB.Client,
		svc: &Service{
			Client: testDB.Client,
			Log:    slog.New(slog.NewTextHandler(io.Discard, nil)),
			Now:    c.Now,
		},
	}
}

// withRedis gives the service the test Redis with a key prefix of its own, whose keys are
// deleted when the test ends.
func (f *fixture) withRedis() *fixture {
	t := f.t
	t.Helper()
	opts, err := redis.ParseURL(testdb.RedisURL())
	if err != nil {
		t.Fatalf("redis URL %q: %v", testdb.RedisURL(), err)
	}
	rdb := redis.NewClient(opts)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		t.Fatalf("these tests need Redis at %s ($%s): %v", opts.Addr, testdb.EnvRedis, err)
	}
	prefix := "vftest:identity:" + strings.ToLower(rand.Text()[:12]) + ":"
	t.Cleanup(func() {
		ctx := context.Background()
		iter := rdb.Scan(ctx, 0, prefix+"*", 100).Iterator()
		for iter.Next(ctx) {
			rdb.Del(ctx, iter.Val())
		}
		rdb.Close()
	})
	f.svc.Redis = rdb
	f.svc.RateLimitPrefix = prefix
	return f
}

type userOpt func(*ent.UserCreate)

func disabled(c *ent.UserCreate) { c.SetStatus(user.StatusDisabled) }

// user makes a user (with password pw when not empty).
func (f *fixture) user(pw string, opts ...userOpt) *ent.User {
	f.t.Helper()
	c := f.db.User.Create().SetUsername(unique("user"))
	if pw != "" {
		h, err := HashPassword(pw)
		if err != nil {
			f.t.Fatal(err)
		}
		c.SetPasswordHash(h)
	}
	for _, o := range opts {
		o(c)
	}
	u, err := c.Save(f.sys)
	if err != nil {
		f.t.Fatal(err)
	}
	return u
}

func (f *fixture) tenant() *ent.Tenant {
	f.t.Helper()
	tn, err := f.db.Tenant.Create().SetName(unique("tenant")).Save(f.sys)
	if err != nil {
		f.t.Fatal(err)
	}
	return tn
}

// node makes a compute node with the host, region, datacenter and cluster it needs.
func (f *fixture) node() *ent.ComputeNode {
	f.t.Helper()
	c := f.db
	must := func(err error) {
		if err != nil {
			f.t.Helper()
			f.t.Fatal(err)
		}
	}
	region, err := c.Region.Create().SetName(unique("region")).Save(f.sys)
	must(err)
	dc, err := c.Datacenter.Create().SetName(unique("dc")).SetRegion(region).Save(f.sys)
	must(err)
	cl, err := c.Cluster.Create().SetName(unique("cluster")).SetRegion(region).SetDatacenter(dc).Save(f.sys)
	must(err)
	host, err := c.Host.Create().SetName(unique("host")).Save(f.sys)
	must(err)
	n, err := c.ComputeNode.Create().SetName(unique("node")).SetHost(host).SetCluster(cl).Save(f.sys)
	must(err)
	return n
}

// bind gives u role: in the platform, or in tenant tn.
func (f *fixture) bind(u *ent.User, role authz.Role, tn *ent.Tenant) *ent.RoleBinding {
	f.t.Helper()
	c := f.db.RoleBinding.Create().SetUser(u).SetRole(rolebinding.Role(role.Enum())).SetDomain(authz.Platform)
	if tn != nil {
		c.SetTenant(tn).SetDomain(authz.TenantDomain(tn.ID))
	}
	b, err := c.Save(f.sys)
	if err != nil {
		f.t.Fatal(err)
	}
	return b
}

type tokenOpt func(*ent.APITokenCreate)

func readOnly(c *ent.APITokenCreate)   { c.SetScope(apitoken.ScopeReadOnly) }
func scopedTo(tn *ent.Tenant) tokenOpt { return func(c *ent.APITokenCreate) { c.SetTenant(tn) } }
func expiresAt(t time.Time) tokenOpt   { return func(c *ent.APITokenCreate) { c.SetExpiresAt(t) } }
func cidrs(cs ...string) tokenOpt      { return func(c *ent.APITokenCreate) { c.SetAllowedCidrs(cs) } }
func kind(k apitoken.Kind) tokenOpt    { return func(c *ent.APITokenCreate) { c.SetKind(k) } }

// token makes a READ_WRITE API token for u and returns its plaintext.
func (f *fixture) token(u *ent.User, opts ...tokenOpt) (string, *ent.APIToken) {
	f.t.Helper()
	plain, hash, prefix := NewToken(apitoken.KindApi)
	c := f.db.APIToken.Create().SetName(unique("token")).SetTokenHash(hash).SetPrefix(prefix).
		SetScope(apitoken.ScopeReadWrite).SetOwner(u)
	for _, o := range opts {
		o(c)
	}
	tok, err := c.Save(f.sys)
	if err != nil {
		f.t.Fatal(err)
	}
	return plain, tok
}

// as is a context acting as u through a new token made with opts.
func (f *fixture) as(u *ent.User, opts ...tokenOpt) context.Context {
	f.t.Helper()
	plain, _ := f.token(u, opts...)
	v, err := f.svc.Authenticate(context.Background(), plain, "192.0.2.10")
	if err != nil {
		f.t.Fatalf("authenticate %s: %v", u.Username, err)
	}
	return authz.NewContext(context.Background(), v)
}

// reload reads token id again.
func (f *fixture) reload(id int) *ent.APIToken {
	f.t.Helper()
	tok, err := f.db.APIToken.Get(f.sys, id)
	if err != nil {
		f.t.Fatal(err)
	}
	return tok
}

// wantCode fails unless err is an *apierr.Error with code (and field, when given).
func wantCode(t testing.TB, err error, code apierr.Code, field ...string) *apierr.Error {
	t.Helper()
	e, ok := apierr.As(err)
	if !ok {
		t.Fatalf("error = %v (%T), want %s", err, err, code)
	}
	if e.Code != code {
		t.Fatalf("error code = %s (%v), want %s", e.Code, e, code)
	}
	if len(field) > 0 && e.Field != field[0] {
		t.Fatalf("error field = %q (%v), want %q", e.Field, e, field[0])
	}
	return e
}

func ptr[T any](v T) *T { return &v }
