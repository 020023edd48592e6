package placement

import (
	"context"
	"sync/atomic"
	"testing"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// TestMain gives the package its own PostgreSQL database; every test builds a site with
// fresh names in it.
func TestMain(m *testing.M) { testdb.Main(m) }

// openPostgres opens the package's database (migrated) and closes it after the test.
func openPostgres(tb testing.TB) *infra.Database {
	tb.Helper()
	db, err := infra.OpenDatabase(context.Background(), testdb.DSN(tb), "")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

// openSQLite opens a fresh embedded database.
func openSQLite(tb testing.TB) *infra.Database {
	tb.Helper()
	db, err := infra.OpenDatabase(context.Background(), "", tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

// counting returns a client over db's connections that counts the statements it sends.
func counting(db *infra.Database) (*ent.Client, *atomic.Int64) {
	var n atomic.Int64
	drv := dialect.DebugWithContext(entsql.OpenDB(db.Dialect, db.DB), func(context.Context, ...any) { n.Add(1) })
	return ent.NewClient(ent.Driver(drv)), &n
}

// build makes a site or fails the test.
func build(tb testing.TB, c *ent.Client, spec placementtest.Spec) *placementtest.Site {
	tb.Helper()
	s, err := placementtest.Build(placementtest.Ctx(), c, spec)
	if err != nil {
		tb.Fatalf("build site: %v", err)
	}
	return s
}

// checkBooks fails the test when a node or quota disagrees with its VMs.
func checkBooks(tb testing.TB, s *placementtest.Site) {
	tb.Helper()
	vs, err := s.Check(placementtest.Ctx())
	if err != nil {
		tb.Fatal(err)
	}
	for _, v := range vs {
		tb.Error(v)
	}
}
