package testdb

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lib/pq"
)

func TestMain(m *testing.M) { Main(m) }

func dbName(t *testing.T, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		// key=value form: the last dbname= wins.
		i := strings.LastIndex(dsn, "dbname=")
		if i < 0 {
			t.Fatalf("no database in DSN %q", dsn)
		}
		return strings.Fields(dsn[i+len("dbname="):])[0]
	}
	return strings.TrimPrefix(u.Path, "/")
}

func open(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func exists(t *testing.T, name string) bool {
	t.Helper()
	ok, err := Exists(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func TestCreateTwoDatabases(t *testing.T) {
	DSN(t) // skip with VIRTFLOW_TEST_SKIP_POSTGRES=1 and no PostgreSQL
	ctx := context.Background()

	dsn1, drop1, err := Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer drop1()
	dsn2, drop2, err := Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer drop2()

	name1, name2 := dbName(t, dsn1), dbName(t, dsn2)
	if name1 == name2 || dsn1 == dsn2 {
		t.Fatalf("Create returned the same database twice: %q, %q", dsn1, dsn2)
	}
	for _, name := range []string{name1, name2} {
		if !strings.HasPrefix(name, NamePrefix) {
			t.Errorf("database name %q lacks prefix %q", name, NamePrefix)
		}
		if !exists(t, name) {
			t.Fatalf("database %s does not exist after Create", name)
		}
	}

	db1, db2 := open(t, dsn1), open(t, dsn2)

	// Each DSN connects to its own database...
	for _, c := range []struct {
		db   *sql.DB
		want string
	}{{db1, name1}, {db2, name2}} {
		var got string
		if err := c.db.QueryRowContext(ctx, `SELECT current_database()`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("connected to %q, want %q", got, c.want)
		}
	}

	// ...which is usable and isolated from the other one.
	if _, err := db1.ExecContext(ctx, `CREATE TABLE t (id int PRIMARY KEY, v text)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db1.ExecContext(ctx, `INSERT INTO t VALUES (1, 'one')`); err != nil {
		t.Fatal(err)
	}
	var v string
	if err := db1.QueryRowContext(ctx, `SELECT v FROM t WHERE id = 1`).Scan(&v); err != nil || v != "one" {
		t.Fatalf("read back from %s: %q, %v", name1, v, err)
	}
	if _, err := db2.ExecContext(ctx, `SELECT 1 FROM t`); err == nil {
		t.Fatalf("table created in %s is visible in %s", name1, name2)
	}
	if _, err := db2.ExecContext(ctx, `CREATE TABLE t (id int PRIMARY KEY)`); err != nil {
		t.Fatalf("same table name in the second database: %v", err)
	}

	// Connections still open (pooled in db1, db2, and a transaction held
	// open in db1) must not stop drop.
	tx, err := db1.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `LOCK TABLE t`); err != nil {
		t.Fatal(err)
	}

	drop1()
	drop2()
	drop1() // idempotent

	for _, name := range []string{name1, name2} {
		if exists(t, name) {
			t.Errorf("database %s still exists after drop", name)
		}
	}
	if err := tx.Rollback(); err == nil {
		t.Errorf("transaction on the dropped database %s still works", name1)
	}
}

func TestPackageDSN(t *testing.T) {
	dsn := DSN(t)
	name := dbName(t, dsn)
	if !nameRE.MatchString(name) {
		t.Fatalf("package database %q does not match %s", name, nameRE)
	}
	var got string
	if err := open(t, dsn).QueryRow(`SELECT current_database()`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != name {
		t.Fatalf("current_database() = %q, want %q", got, name)
	}
}

func TestDropStale(t *testing.T) {
	DSN(t) // skip with VIRTFLOW_TEST_SKIP_POSTGRES=1 and no PostgreSQL
	ctx := context.Background()
	admin, err := sql.Open("postgres", AdminDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()

	create := func(name string) {
		t.Helper()
		if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+pq.QuoteIdentifier(name)); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = dropDatabase(AdminDSN(), name) })
	}
	old := time.Now().Add(-48 * time.Hour)
	staleName, _ := newName(old)
	busyName, _ := newName(old)
	freshName, _ := newName(time.Now())
	create(staleName)
	create(busyName)
	create(freshName)

	// Somebody still connected to busyName: it must survive.
	busyDSN, err := withDatabase(AdminDSN(), busyName)
	if err != nil {
		t.Fatal(err)
	}
	busy := open(t, busyDSN)
	conn, err := busy.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	dropped, err := DropStale(ctx, StaleAge)
	if err != nil {
		t.Fatal(err)
	}
	var sawStale bool
	for _, name := range dropped {
		if name == staleName {
			sawStale = true
		}
		if name == busyName || name == freshName {
			t.Errorf("DropStale dropped %s", name)
		}
	}
	if !sawStale || exists(t, staleName) {
		t.Errorf("stale database %s not dropped (dropped: %v)", staleName, dropped)
	}
	if !exists(t, busyName) || !exists(t, freshName) {
		t.Errorf("DropStale dropped a database in use or too young")
	}
}

func TestNew(t *testing.T) {
	DSN(t) // skip with VIRTFLOW_TEST_SKIP_POSTGRES=1 and no PostgreSQL
	var name string
	t.Run("sub", func(t *testing.T) {
		dsn := New(t)
		name = dbName(t, dsn)
		if name == dbName(t, DSN(t)) {
			t.Fatalf("New returned the package database")
		}
		if err := open(t, dsn).Ping(); err != nil {
			t.Fatal(err)
		}
	})
	if exists(t, name) {
		t.Errorf("database %s from New still exists after its test ended", name)
	}
}

func TestWithDatabase(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "postgres://postgres@127.0.0.1:5432/vf_x?sslmode=disable"},
		{"postgresql://u:p@db:5433?sslmode=require", "postgresql://u:p@db:5433/vf_x?sslmode=require"},
		{"postgres:///postgres?host=/run/postgresql", "postgres:///vf_x?host=%2Frun%2Fpostgresql"},
		{"host=127.0.0.1 user=postgres dbname=postgres sslmode=disable", "host=127.0.0.1 user=postgres dbname=postgres sslmode=disable dbname=vf_x"},
	} {
		got, err := withDatabase(c.in, "vf_x")
		if err != nil {
			t.Errorf("withDatabase(%q): %v", c.in, err)
			continue
		}
		// Compare parsed URLs so query encoding details do not matter.
		if gu, err1 := url.Parse(got); err1 == nil && gu.Scheme != "" {
			wu, _ := url.Parse(c.want)
			if gu.Path != wu.Path || gu.Host != wu.Host || gu.User.String() != wu.User.String() || gu.Query().Encode() != wu.Query().Encode() {
				t.Errorf("withDatabase(%q) = %q, want %q", c.in, got, c.want)
			}
			continue
		}
		if got != c.want {
			t.Errorf("withDatabase(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// The key=value form must really select the new database in lib/pq.
func TestKeyValueDSNConnects(t *testing.T) {
	kv := DSN(t) // an admin DSN in key=value form is used as it is
	if u, err := url.Parse(kv); err == nil && u.Scheme != "" {
		kv = fmt.Sprintf("host=%s port=%s dbname=postgres sslmode=disable", u.Hostname(), u.Port())
		if u.Port() == "" {
			kv = fmt.Sprintf("host=%s dbname=postgres sslmode=disable", u.Hostname())
		}
		if user := u.User.Username(); user != "" {
			kv += " user=" + user
		}
		if pw, ok := u.User.Password(); ok {
			kv += " password='" + strings.ReplaceAll(pw, "'", `\'`) + "'"
		}
	}
	name := dbName(t, DSN(t))
	dsn, err := withDatabase(kv, name)
	if err != nil {
		t.Fatal(err)
	}
	var got string
	if err := open(t, dsn).QueryRow(`SELECT current_database()`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != name {
		t.Fatalf("key=value DSN %q connected to %q, want %q", redact(dsn), got, name)
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:secret@h/db":           "postgres://u:xxxxx@h/db",
		"postgres://u@h/db?password=secret":  "postgres://u@h/db?password=xxxxx",
		"host=h password=secret user=u":      "host=h password=xxxxx user=u",
		"host=h password='se cret' user=u":   "host=h password=xxxxx user=u",
		"postgres://postgres@127.0.0.1:5432": "postgres://postgres@127.0.0.1:5432",
	} {
		if got := redact(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRedisURL(t *testing.T) {
	t.Setenv(EnvRedis, "")
	if got := RedisURL(); got != DefaultRedis {
		t.Errorf("RedisURL() = %q, want default %q", got, DefaultRedis)
	}
	t.Setenv(EnvRedis, "redis://10.0.0.1:6380/2")
	if got := RedisURL(); got != "redis://10.0.0.1:6380/2" {
		t.Errorf("RedisURL() = %q, want the env value", got)
	}
}
