package stmtcache_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"testing"

	"github.com/lib/pq"

	"github.com/virtflow/virtflow/internal/testkit/testdb"
	"github.com/virtflow/virtflow/store/stmtcache"
)

// open returns a pool of one connection through a Connector of size statements, on a new
// test database.
func open(t *testing.T, size int) *sql.DB {
	t.Helper()
	base, err := pq.NewConnector(testdb.New(t))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(&stmtcache.Connector{Base: base, Size: size})
	db.SetMaxOpenConns(1) // one session: pg_prepared_statements shows its statements
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// prepared lists the statements the session holds prepared.
func prepared(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query(`SELECT statement FROM pg_prepared_statements ORDER BY prepare_time`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// TestStatementPreparedOnceAndReused: a parameterized statement is prepared by name on its
// first use and reused after, inside and outside transactions; one without parameters is
// never prepared.
func TestStatementPreparedOnceAndReused(t *testing.T) {
	db := open(t, 0)
	const q = `SELECT $1::int + 1`
	for i := range 3 {
		var got int
		if err := db.QueryRow(q, i).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != i+1 {
			t.Fatalf("%s with %d = %d", q, i, got)
		}
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	var got int
	if err := tx.QueryRow(q, 41).Scan(&got); err != nil || got != 42 {
		t.Fatalf("in a transaction: %d, %v", got, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`SELECT 1`); err != nil {
		t.Fatal(err)
	}
	if got := prepared(t, db); len(got) != 1 || got[0] != q {
		t.Fatalf("prepared statements %q, want only %q", got, q)
	}
}

// TestValuesAsBefore: values travel as lib/pq sends them without the cache — JSON text into
// jsonb, arbitrary bytes into bytea, NULLs, arrays — on first and later use.
func TestValuesAsBefore(t *testing.T) {
	db := open(t, 0)
	if _, err := db.Exec(`CREATE TABLE t (id int PRIMARY KEY, doc jsonb, data bytea, tags text[], note text)`); err != nil {
		t.Fatal(err)
	}
	doc, _ := json.Marshal(map[string]string{"quote": `a "b" \ c`})
	data := []byte{0, '\\', 'x', 0xff, '{', '"', '}'}
	for id := range 2 {
		if _, err := db.Exec(`INSERT INTO t (id, doc, data, tags, note) VALUES ($1, $2, $3, $4, $5)`,
			id, doc, data, pq.Array([]string{"a", "b c"}), nil); err != nil {
			t.Fatal(err)
		}
		var gotDoc, gotData []byte
		var tags []string
		var note sql.NullString
		if err := db.QueryRow(`SELECT doc, data, tags, note FROM t WHERE id = $1`, id).
			Scan(&gotDoc, &gotData, pq.Array(&tags), &note); err != nil {
			t.Fatal(err)
		}
		var back map[string]string
		if err := json.Unmarshal(gotDoc, &back); err != nil || back["quote"] != `a "b" \ c` {
			t.Fatalf("jsonb came back as %s (%v)", gotDoc, err)
		}
		if !bytes.Equal(gotData, data) || len(tags) != 2 || tags[1] != "b c" || note.Valid {
			t.Fatalf("row %d: data %q tags %q note %v", id, gotData, tags, note)
		}
	}
}

// TestLeastRecentlyUsedClosed: a connection keeps at most Size statements, closing the least
// recently used one on the server.
func TestLeastRecentlyUsedClosed(t *testing.T) {
	db := open(t, 2)
	qs := []string{`SELECT $1::int`, `SELECT $1::int * 2`, `SELECT $1::int * 3`}
	for _, q := range qs[:2] {
		if _, err := db.Exec(q, 1); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(qs[0], 1); err != nil { // qs[1] is now the least recently used
		t.Fatal(err)
	}
	if _, err := db.Exec(qs[2], 1); err != nil {
		t.Fatal(err)
	}
	got := prepared(t, db)
	if len(got) != 2 || got[0] != qs[0] || got[1] != qs[2] {
		t.Fatalf("prepared %q, want %q and %q", got, qs[0], qs[2])
	}
}

// TestStatementPreparedAgainAfterDDL: when a DDL changes what a kept statement returns, its
// next use fails with PostgreSQL's own error, and the one after prepares it again.
func TestStatementPreparedAgainAfterDDL(t *testing.T) {
	db := open(t, 0)
	ctx := context.Background()
	if _, err := db.Exec(`CREATE TABLE t (id int PRIMARY KEY, a int); INSERT INTO t VALUES (1, 10)`); err != nil {
		t.Fatal(err)
	}
	const q = `SELECT * FROM t WHERE id = $1`
	scan := func() (int, error) {
		rows, err := db.QueryContext(ctx, q, 1)
		if err != nil {
			return 0, err
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		return len(cols), rows.Err()
	}
	if n, err := scan(); err != nil || n != 2 {
		t.Fatalf("before the DDL: %d columns, %v", n, err)
	}
	if _, err := db.Exec(`ALTER TABLE t ADD COLUMN b int`); err != nil {
		t.Fatal(err)
	}
	_, err := scan()
	var pe *pq.Error
	if !errors.As(err, &pe) || pe.Code != "0A000" {
		t.Fatalf("first use after the DDL: %v, want PostgreSQL's cached plan error", err)
	}
	if n, err := scan(); err != nil || n != 3 {
		t.Fatalf("second use after the DDL: %d columns, %v; want it prepared again", n, err)
	}
}
