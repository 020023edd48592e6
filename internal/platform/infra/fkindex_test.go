package infra_test

import (
	"context"
	"testing"

	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// unindexedAllowed lists the foreign-key columns (table.column) that may stay without an
// index, each with the reason. It is empty: every foreign key is followed backwards by some
// view, filter, edge or ON DELETE check.
var unindexedAllowed = map[string]string{}

// TestEveryForeignKeyIndexed migrates a fresh database the way the server does and walks
// PostgreSQL's catalog: every foreign-key column must lead some index (or be in the
// allow-list above), so a new edge cannot bring back a sequential scan of hosts or ports.
func TestEveryForeignKeyIndexed(t *testing.T) {
	ctx := context.Background()
	db, err := infra.OpenDatabase(ctx, testdb.New(t), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.DB.QueryContext(ctx, `
SELECT c.conrelid::regclass::text, a.attname
FROM pg_constraint c
JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
WHERE c.contype = 'f' AND c.connamespace = 'public'::regnamespace
  AND NOT EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.conrelid AND i.indkey[0] = c.conkey[1])
ORDER BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var fks int
	for rows.Next() {
		var table, column string
		if err := rows.Scan(&table, &column); err != nil {
			t.Fatal(err)
		}
		if _, ok := unindexedAllowed[table+"."+column]; !ok {
			t.Errorf("foreign key %s.%s has no index: declare one in its ent schema or let schema.IndexForeignKeys see it", table, column)
		}
		fks++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var total int
	if err := db.DB.QueryRowContext(ctx, `SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND connamespace = 'public'::regnamespace`).Scan(&total); err != nil {
		t.Fatal(err)
	}
	if total < 80 {
		t.Fatalf("only %d foreign keys in the migrated schema: the walk is not looking at VirtFlow's tables", total)
	}
	t.Logf("%d foreign keys, %d without an index", total, fks)
}

// TestMigrationIsStable migrates the same database twice: the second run must find nothing
// to change (the foreign-key index names survive PostgreSQL's identifier limit).
func TestMigrationIsStable(t *testing.T) {
	ctx := context.Background()
	dsn := testdb.New(t)
	for i := 0; i < 2; i++ {
		db, err := infra.OpenDatabase(ctx, dsn, t.TempDir())
		if err != nil {
			t.Fatalf("migration %d: %v", i+1, err)
		}
		_ = db.Close()
	}
}
