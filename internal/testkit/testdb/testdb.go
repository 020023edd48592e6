package testdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lib/pq"
)

// Environment variables read by this package.
const (
	EnvPostgres     = "VIRTFLOW_TEST_POSTGRES"
	EnvRedis        = "VIRTFLOW_TEST_REDIS"
	EnvSkipPostgres = "VIRTFLOW_TEST_SKIP_POSTGRES"
)

// Defaults used when the environment variables are unset or empty.
const (
	DefaultPostgres = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	DefaultRedis    = "redis://127.0.0.1:6379/0"
)

// NamePrefix starts the name of every database created by Create.
const NamePrefix = "vf_test_"

// StaleAge is how old a vf_test_ database must be before Main considers it
// left behind by a test binary that was killed, and drops it.
const StaleAge = 24 * time.Hour

const (
	setupTimeout = 30 * time.Second
	dropTimeout  = 30 * time.Second
)

// Database names are NamePrefix + creation time (Unix seconds) + "_" + 16
// random hex digits, e.g. vf_test_1763720000_9f86d081884c7d65 (35 bytes,
// well below PostgreSQL's 63-byte limit). Only lower-case letters, digits
// and underscores, so the name never needs quoting in a DSN.
var nameRE = regexp.MustCompile(`^` + NamePrefix + `([0-9]+)_[0-9a-f]{16}$`)

// AdminDSN returns the DSN used to create and drop test databases:
// $VIRTFLOW_TEST_POSTGRES, or DefaultPostgres.
func AdminDSN() string {
	if v := strings.TrimSpace(os.Getenv(EnvPostgres)); v != "" {
		return v
	}
	return DefaultPostgres
}

// RedisURL returns the Redis URL tests should use: $VIRTFLOW_TEST_REDIS, or
// DefaultRedis.
func RedisURL() string {
	if v := strings.TrimSpace(os.Getenv(EnvRedis)); v != "" {
		return v
	}
	return DefaultRedis
}

// Create creates a new, empty database with a random name on the server of
// AdminDSN and returns a DSN for it (same server, user and options as the
// admin DSN; only the database differs).
//
// drop terminates the connections still open to the database and drops it.
// It may be called more than once; only the first call does anything. It
// does not use ctx (which may be over by then) and reports failures on
// stderr, since there is nothing a caller could do about them.
func Create(ctx context.Context) (dsn string, drop func(), err error) {
	admin := AdminDSN()
	name, err := newName(time.Now())
	if err != nil {
		return "", nil, err
	}
	dsn, err = withDatabase(admin, name)
	if err != nil {
		return "", nil, err
	}

	db, err := openAdmin(ctx, admin)
	if err != nil {
		return "", nil, err
	}
	defer db.Close()

	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+pq.QuoteIdentifier(name)); err != nil {
		return "", nil, fmt.Errorf("testdb: create database %s on %s: %w", name, redact(admin), err)
	}

	var once sync.Once
	drop = func() {
		once.Do(func() {
			if err := dropDatabase(admin, name); err != nil {
				fmt.Fprintf(os.Stderr, "testdb: %v\n", err)
			}
		})
	}
	return dsn, drop, nil
}

// The database of the current test package, set by Main/MainFunc before
// m.Run (so before any test goroutine starts) and never changed afterwards.
var (
	pkgDSN  string
	pkgSkip string // non-empty: PostgreSQL unavailable and skipping allowed
	pkgInit bool   // Main or MainFunc was called
)

// Main is a complete TestMain for a package whose tests need PostgreSQL:
//
//	func TestMain(m *testing.M) { testdb.Main(m) }
//
// It creates the package's database, runs the tests (which get its DSN from
// DSN), drops the database and exits with the tests' exit code.
//
// If the database cannot be created, the package fails with a message saying
// why, without running any test; with VIRTFLOW_TEST_SKIP_POSTGRES=1 the tests
// run instead and those calling DSN are skipped.
func Main(m *testing.M) {
	os.Exit(run(m, nil))
}

// MainFunc is Main for packages that prepare the database before their
// tests: f receives the DSN of the package's database and must call m.Run
// and return its result. DSN works inside f and in the tests.
//
// If the database cannot be created, the package fails without calling f;
// with VIRTFLOW_TEST_SKIP_POSTGRES=1 f is not called either and the whole
// package is reported as passed with nothing run (a message on stderr, shown
// by go test -v, says so).
func MainFunc(m *testing.M, f func(dsn string) int) {
	if f == nil {
		panic("testdb.MainFunc: nil func")
	}
	os.Exit(run(m, f))
}

func run(m *testing.M, f func(dsn string) int) int {
	pkgInit = true

	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	dsn, drop, err := Create(ctx)
	cancel()
	if err != nil {
		if skipAllowed() {
			pkgSkip = fmt.Sprintf("PostgreSQL unavailable and %s=1: %v", EnvSkipPostgres, err)
			fmt.Fprintf(os.Stderr, "testdb: SKIP: %s\n", pkgSkip)
			if f != nil {
				return 0
			}
			return m.Run()
		}
		fmt.Fprintf(os.Stderr, `
testdb: FAIL: cannot create this package's test database.
    %v
These tests need a PostgreSQL server that the admin DSN can CREATE DATABASE on.
    admin DSN: %s (from $%s, default %s)
Start one (.ci/run does it, see also ../shared/STACK.md), or point $%s at one,
or set %s=1 to skip the tests that need it.

`, err, redact(AdminDSN()), EnvPostgres, DefaultPostgres, EnvPostgres, EnvSkipPostgres)
		return 1
	}
	defer drop()
	pkgDSN = dsn

	// Best effort: a failure here must not fail the package.
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	if _, err := DropStale(ctx, StaleAge); err != nil {
		fmt.Fprintf(os.Stderr, "testdb: dropping stale test databases: %v\n", err)
	}
	cancel()

	if f == nil {
		return m.Run()
	}
	return f(dsn)
}

// DSN returns the DSN of the package's database created by Main or MainFunc.
// It skips the test if PostgreSQL is unavailable and
// VIRTFLOW_TEST_SKIP_POSTGRES=1, and fails it if TestMain does not use Main
// or MainFunc.
func DSN(tb testing.TB) string {
	tb.Helper()
	switch {
	case pkgDSN != "":
		return pkgDSN
	case pkgSkip != "":
		tb.Skip(pkgSkip)
	case !pkgInit:
		tb.Fatal("testdb.DSN: no package database; the package needs func TestMain(m *testing.M) { testdb.Main(m) } (or testdb.MainFunc)")
	default:
		tb.Fatal("testdb.DSN: no package database")
	}
	return ""
}

// New creates a database for one test (or benchmark) and drops it when the
// test ends; use it when a test needs a database of its own rather than the
// package's. If the database cannot be created the test fails, or is skipped
// with VIRTFLOW_TEST_SKIP_POSTGRES=1. It does not need Main.
func New(tb testing.TB) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	dsn, drop, err := Create(ctx)
	if err != nil {
		Unavailable(tb, err)
	}
	tb.Cleanup(drop)
	return dsn
}

// Unavailable ends a test that could not get a database from Create: skipped when
// EnvSkipPostgres allows it (naming PostgreSQL as the missing part), failed otherwise.
func Unavailable(tb testing.TB, err error) {
	tb.Helper()
	if skipAllowed() {
		tb.Skipf("PostgreSQL unavailable and %s=1: %v", EnvSkipPostgres, err)
	}
	tb.Fatalf("%v (set $%s, or %s=1 to skip)", err, EnvPostgres, EnvSkipPostgres)
}

// DropStale drops the databases named like Create's whose embedded creation
// time is more than olderThan ago and to which nobody is connected, and
// returns their names. Databases in use are left alone (DROP DATABASE
// refuses them), so a long-running test binary never loses its database.
func DropStale(ctx context.Context, olderThan time.Duration) ([]string, error) {
	admin := AdminDSN()
	db, err := openAdmin(ctx, admin)
	if err != nil {
		return nil, err
	}
	defer db.Close()

	// Databases with connections are skipped here already: DROP DATABASE
	// would refuse them too, but only after waiting 5 seconds.
	rows, err := db.QueryContext(ctx, `
		SELECT d.datname FROM pg_database d
		WHERE d.datname LIKE $1 AND NOT d.datistemplate
		  AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.datname = d.datname)`,
		strings.ReplaceAll(NamePrefix, "_", `\_`)+"%")
	if err != nil {
		return nil, fmt.Errorf("testdb: list test databases: %w", err)
	}
	var stale []string
	cutoff := time.Now().Add(-olderThan)
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return nil, err
		}
		if created, ok := nameTime(name); ok && created.Before(cutoff) {
			stale = append(stale, name)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}

	var dropped []string
	for _, name := range stale {
		_, err := db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+pq.QuoteIdentifier(name))
		switch {
		case err == nil:
			dropped = append(dropped, name)
		case isObjectInUse(err):
			// Still used by someone: not stale after all.
		default:
			return dropped, fmt.Errorf("testdb: drop stale database %s: %w", name, err)
		}
	}
	return dropped, nil
}

// Exists reports whether a database with the given name exists on the server
// of AdminDSN.
func Exists(ctx context.Context, name string) (bool, error) {
	db, err := openAdmin(ctx, AdminDSN())
	if err != nil {
		return false, err
	}
	defer db.Close()
	var exists bool
	err = db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists)
	return exists, err
}

func openAdmin(ctx context.Context, admin string) (*sql.DB, error) {
	db, err := sql.Open("postgres", admin)
	if err != nil {
		return nil, fmt.Errorf("testdb: invalid %s %q: %w", EnvPostgres, redact(admin), err)
	}
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("testdb: cannot connect to PostgreSQL at %s: %w", redact(admin), err)
	}
	return db, nil
}

func dropDatabase(admin, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), dropTimeout)
	defer cancel()
	db, err := openAdmin(ctx, admin)
	if err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	defer db.Close()

	for {
		// pg_terminate_backend only signals; a backend may still be
		// exiting when DROP DATABASE runs, hence the retries on 55006.
		// (DROP DATABASE ... WITH (FORCE) needs PostgreSQL 13+.)
		if _, err := db.ExecContext(ctx,
			`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
			name); err != nil {
			return fmt.Errorf("drop database %s: terminate connections: %w", name, err)
		}
		_, err := db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+pq.QuoteIdentifier(name))
		if err == nil {
			return nil
		}
		if !isObjectInUse(err) {
			return fmt.Errorf("drop database %s: %w", name, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("drop database %s: still in use after %s: %w", name, dropTimeout, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func isObjectInUse(err error) bool {
	var pqErr *pq.Error
	return errors.As(err, &pqErr) && pqErr.Code == "55006" // object_in_use
}

func skipAllowed() bool {
	v, err := strconv.ParseBool(strings.TrimSpace(os.Getenv(EnvSkipPostgres)))
	return err == nil && v
}

func newName(now time.Time) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("testdb: random name: %w", err)
	}
	return fmt.Sprintf("%s%d_%s", NamePrefix, now.Unix(), hex.EncodeToString(b[:])), nil
}

// nameTime returns the creation time embedded in a name made by newName.
func nameTime(name string) (time.Time, bool) {
	m := nameRE.FindStringSubmatch(name)
	if m == nil {
		return time.Time{}, false
	}
	sec, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(sec, 0), true
}

// withDatabase returns dsn with its database replaced by name. Both forms
// lib/pq accepts are handled: URLs (postgres:// or postgresql://) and
// key=value lists, where a trailing dbname= wins over an earlier one.
func withDatabase(dsn, name string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", fmt.Errorf("testdb: invalid %s: %w", EnvPostgres, err)
		}
		u.Path = "/" + name
		u.RawPath = ""
		return u.String(), nil
	}
	return strings.TrimSpace(dsn) + " dbname=" + name, nil
}

var passwordKV = regexp.MustCompile(`(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`)

// redact hides the password in a DSN, for messages.
func redact(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" {
		q := u.Query()
		if q.Has("password") {
			q.Set("password", "xxxxx")
			u.RawQuery = q.Encode()
		}
		return u.Redacted()
	}
	return passwordKV.ReplaceAllString(dsn, "${1}xxxxx")
}
