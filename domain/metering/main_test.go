package metering_test

import (
	"context"
	"testing"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// TestMain gives the package its own PostgreSQL database.
func TestMain(m *testing.M) { testdb.Main(m) }

// openPostgres opens the package's database (migrated) and closes it after the test.
func openPostgres(tb testing.TB) *ent.Client {
	tb.Helper()
	db, err := infra.OpenDatabase(context.Background(), testdb.DSN(tb), "")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db.Client
}

// openSQLite opens a fresh embedded database.
func openSQLite(tb testing.TB) *ent.Client {
	tb.Helper()
	db, err := infra.OpenDatabase(context.Background(), "", tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db.Client
}

// codeOf is the API error code of err, empty when it has none.
func codeOf(err error) apierr.Code {
	if e, ok := apierr.As(err); ok {
		return e.Code
	}
	return ""
}
