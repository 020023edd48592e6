package stmtcache

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"
)

// openSQLite returns a pool of one SQLite connection through an SQLite connector keeping
// size statements, on a new database file.
func openSQLite(t *testing.T, size int) *sql.DB {
	t.Helper()
	dsn := "file:" + filepath.Join(t.TempDir(), "t.db") + "?_pragma=journal_mode(WAL)&_txlock=immediate"
	reg, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(&SQLite{Base: reg.Driver(), DSN: dsn, Size: size})
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// kept is how many statements the pool's connection keeps.
func kept(t *testing.T, db *sql.DB) int {
	t.Helper()
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n := -1
	if err := c.Raw(func(dc any) error {
		n = dc.(*sqliteConn).stmts.Len()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSQLiteKeepsStatements: repeated statements are kept compiled and give the same
// results as before; a query whose rows are open runs again beside them on the driver's
// own path; a schema change is seen by a kept statement; errors leave a usable statement;
// the least recently used statement goes when the cache is full.
func TestSQLiteKeepsStatements(t *testing.T) {
	ctx := context.Background()
	db := openSQLite(t, 4)
	if _, err := db.ExecContext(ctx, "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL UNIQUE)"); err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if _, err := tx.ExecContext(ctx, "INSERT INTO t (v) VALUES (?)", fmt.Sprintf("v%02d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if n := kept(t, db); n != 1 {
		t.Errorf("%d statements kept after 50 inserts of one text; want 1", n)
	}

	// The same SELECT, nested: the inner one cannot share the outer's open statement.
	const q = "SELECT id, v FROM t WHERE id > ? ORDER BY id"
	rows, err := db.QueryContext(ctx, q, 45) // holds the only connection: run the rest in its tx
	if err != nil {
		t.Fatal(err)
	}
	var outer []string
	for rows.Next() {
		var id int
		var v string
		if err := rows.Scan(&id, &v); err != nil {
			t.Fatal(err)
		}
		outer = append(outer, v)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(outer) != "[v45 v46 v47 v48 v49]" {
		t.Errorf("rows %v", outer)
	}
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := tx.QueryContext(ctx, q, 47)
	if err != nil {
		t.Fatal(err)
	}
	var nested []string
	for a.Next() {
		var id int
		var v string
		if err := a.Scan(&id, &v); err != nil {
			t.Fatal(err)
		}
		var w string
		if err := tx.QueryRowContext(ctx, q, id-2).Scan(&id, &w); err != nil {
			t.Fatal(err)
		}
		nested = append(nested, v+"/"+w)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(nested) != "[v47/v46 v48/v47 v49/v48]" {
		t.Errorf("nested rows %v", nested)
	}

	// A constraint error, then the same statement succeeds.
	if _, err := db.ExecContext(ctx, "INSERT INTO t (v) VALUES (?)", "v01"); err == nil {
		t.Fatal("duplicate inserted")
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO t (v) VALUES (?)", "v50"); err != nil {
		t.Fatal(err)
	}

	// A kept SELECT * sees a column added since it was compiled.
	const all = "SELECT * FROM t WHERE id = ?"
	cols := func() int {
		r, err := db.QueryContext(ctx, all, 1)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		c, err := r.Columns()
		if err != nil {
			t.Fatal(err)
		}
		return len(c)
	}
	if n := cols(); n != 2 {
		t.Fatalf("%d columns; want 2", n)
	}
	if _, err := db.ExecContext(ctx, "ALTER TABLE t ADD COLUMN w INTEGER NOT NULL DEFAULT 7"); err != nil {
		t.Fatal(err)
	}
	if n := cols(); n != 3 {
		t.Errorf("%d columns after ALTER TABLE; want 3", n)
	}

	// Full: the least recently used goes, and what stays still answers.
	for i := range 6 {
		var n int
		if err := db.QueryRowContext(ctx, fmt.Sprintf("SELECT count(*) + %d FROM t WHERE id > ?", i), 0).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 51+i {
			t.Errorf("count %d; want %d", n, 51+i)
		}
	}
	if n := kept(t, db); n != 4 {
		t.Errorf("%d statements kept; want the cache's 4", n)
	}
}
