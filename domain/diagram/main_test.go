package diagram_test

import (
	"context"
	"sync/atomic"
	"testing"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// The package's tests and benchmarks share one PostgreSQL database (testdb); without
// PostgreSQL and with VIRTFLOW_TEST_SKIP_POSTGRES=1 they skip.
func TestMain(m *testing.M) { testdb.Main(m) }

// newEnv opens the package's database with the real HTTP handler and an admin token.
func newEnv(tb testing.TB) *gqltest.Env {
	tb.Helper()
	return gqltest.Postgres(tb, testdb.DSN(tb))
}

// viewerCtx is a context acting as the holder of token, authenticated the way a request is.
func viewerCtx(tb testing.TB, env *gqltest.Env, token string) context.Context {
	tb.Helper()
	v, err := env.Identity.Authenticate(context.Background(), token, "127.0.0.1")
	if err != nil {
		tb.Fatalf("authenticate: %v", err)
	}
	return authz.NewContext(context.Background(), v)
}

// counter is an ent driver that counts the SQL statements run through it.
type counter struct {
	dialect.Driver
	n atomic.Int64
}

func (c *counter) Query(ctx context.Context, query string, args, v any) error {
	c.n.Add(1)
	return c.Driver.Query(ctx, query, args, v)
}

func (c *counter) Exec(ctx context.Context, query string, args, v any) error {
	c.n.Add(1)
	return c.Driver.Exec(ctx, query, args, v)
}

// countingClient is a client over the env's database that counts its statements. Views run
// no transaction, so statements inside one are not counted.
func countingClient(env *gqltest.Env) (*ent.Client, *counter) {
	d := &counter{Driver: entsql.OpenDB(dialect.Postgres, env.DB.DB)}
	return ent.NewClient(ent.Driver(d)), d
}
