// Package migrations holds VirtFlow's versioned PostgreSQL schema migrations (the *.sql files
// and atlas.sum of this directory, in Atlas's format) and applies them.
//
// The files are generated, never written by hand: after changing ent/schema, run
//
//	make migrations NAME=short_description
//
// which replays the directory on a scratch PostgreSQL database, diffs it against the ent schema
// with Atlas and writes the difference as a new file (see gen/). TestMigrationsMatchSchema fails
// while the ent schema and the files disagree.
//
// Apply runs the files not yet applied, each in its own transaction, while holding a
// PostgreSQL advisory lock, so servers and workers starting together on a fresh database
// migrate it exactly once. The embedded SQLite database (--demo, no DATABASE_URL) is not
// versioned: it is migrated by ent's automatic migration.
package migrations

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"sort"
	"strings"
	"time"

	"ariga.io/atlas/sql/migrate"
)

//go:embed *.sql atlas.sum
var files embed.FS

// LockKey is the PostgreSQL advisory lock (pg_advisory_lock) held while migrating; its
// bytes spell "virtflow".
const LockKey int64 = 0x76697274666c6f77

// RevisionsTable records the applied migrations: version, description, hash, applied_at.
const RevisionsTable = "virtflow_schema_revisions"

// SumFile is Atlas's checksum file, which guards the directory against edited or lost files.
const SumFile = "atlas.sum"

// Files returns the migration files in the order they apply, after checking them against
// atlas.sum.
func Files() ([]migrate.File, error) { return filesOf(files) }

func filesOf(fsys fs.FS) ([]migrate.File, error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	out := make([]migrate.File, 0, len(names))
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		out = append(out, migrate.NewLocalFile(path.Base(n), b))
	}
	want, err := fs.ReadFile(fsys, SumFile)
	if err != nil {
		return nil, fmt.Errorf("migrations: read %s: %w", SumFile, err)
	}
	sum, err := migrate.NewHashFile(out)
	if err != nil {
		return nil, err
	}
	got, err := sum.MarshalText()
	if err != nil {
		return nil, err
	}
	if string(got) != string(want) {
		return nil, fmt.Errorf("migrations: %s does not match the migration files (edited by hand or merged?): run make migrations", SumFile)
	}
	return out, nil
}

// Result says what Apply did.
type Result struct {
	Applied    []string      // versions applied by this call, in order
	Baselined  string        // the version recorded without running it on a pre-versioning database, if any
	Current    string        // the database's version afterwards
	Took       time.Duration // time spent, waiting for the lock included
	WaitedLock time.Duration // time spent waiting for another migrator's lock
}

// Apply brings the PostgreSQL database db to the newest migration. It holds the advisory lock
// LockKey on one connection for its whole run, so concurrent callers wait for each other and
// then find nothing left to do. Each migration runs in a transaction with its revision row: a
// failure leaves the database at the previous version.
//
// A database created before versioned migrations (by ent's automatic migration of the release
// the first migration file was generated from) holds VirtFlow tables but no revisions: Apply
// records the first file as applied without running it (the baseline) and applies the rest.
func Apply(ctx context.Context, db *sql.DB, log *slog.Logger) (Result, error) {
	return apply(ctx, db, files, log)
}

func apply(ctx context.Context, db *sql.DB, fsys fs.FS, log *slog.Logger) (res Result, err error) {
	start := time.Now()
	defer func() { res.Took = time.Since(start) }()
	list, err := filesOf(fsys)
	if err != nil {
		return res, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return res, fmt.Errorf("migrations: connect: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", LockKey); err != nil {
		return res, fmt.Errorf("migrations: take the advisory lock: %w", err)
	}
	res.WaitedLock = time.Since(start)
	defer func() {
		// The lock belongs to the session: release it even when ctx is over.
		uctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, uerr := conn.ExecContext(uctx, "SELECT pg_advisory_unlock($1)", LockKey); uerr != nil && err == nil {
			err = fmt.Errorf("migrations: release the advisory lock: %w", uerr)
		}
	}()
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+RevisionsTable+` (
		version     text PRIMARY KEY,
		description text NOT NULL,
		hash        text NOT NULL,
		baseline    boolean NOT NULL DEFAULT false,
		applied_at  timestamptz NOT NULL DEFAULT now()
	)`); err != nil {
		return res, fmt.Errorf("migrations: create %s: %w", RevisionsTable, err)
	}
	applied, err := appliedVersions(ctx, conn)
	if err != nil {
		return res, err
	}
	if len(applied) == 0 && len(list) > 0 {
		legacy, err := hasTables(ctx, conn)
		if err != nil {
			return res, err
		}
		if legacy {
			f := list[0]
			if err := record(ctx, conn, f, true); err != nil {
				return res, err
			}
			applied[f.Version()] = true
			res.Baselined = f.Version()
			log.Info("database predates versioned migrations: recorded the first migration as its baseline", "version", f.Version())
		}
	}
	for _, f := range list {
		if applied[f.Version()] {
			res.Current = f.Version()
			continue
		}
		t := time.Now()
		if err := applyFile(ctx, conn, f); err != nil {
			return res, err
		}
		res.Applied = append(res.Applied, f.Version())
		res.Current = f.Version()
		log.Info("applied migration", "version", f.Version(), "description", f.Desc(), "took", time.Since(t).Round(time.Millisecond))
	}
	return res, nil
}

func applyFile(ctx context.Context, conn *sql.Conn, f migrate.File) error {
	stmts, err := f.Stmts()
	if err != nil {
		return fmt.Errorf("migrations: parse %s: %w", f.Name(), err)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrations: begin %s: %w", f.Name(), err)
	}
	defer func() { _ = tx.Rollback() }()
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("migrations: %s: %w (in %q)", f.Name(), err, firstLine(s))
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO `+RevisionsTable+` (version, description, hash) VALUES ($1, $2, $3)`,
		f.Version(), f.Desc(), hashOf(f)); err != nil {
		return fmt.Errorf("migrations: record %s: %w", f.Name(), err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrations: commit %s: %w", f.Name(), err)
	}
	return nil
}

func record(ctx context.Context, conn *sql.Conn, f migrate.File, baseline bool) error {
	_, err := conn.ExecContext(ctx, `INSERT INTO `+RevisionsTable+` (version, description, hash, baseline) VALUES ($1, $2, $3, $4)`,
		f.Version(), f.Desc(), hashOf(f), baseline)
	if err != nil {
		return fmt.Errorf("migrations: record %s: %w", f.Name(), err)
	}
	return nil
}

func hashOf(f migrate.File) string {
	sum, err := migrate.NewHashFile([]migrate.File{f})
	if err != nil {
		return ""
	}
	h, _ := sum.SumByName(f.Name())
	return h
}

func appliedVersions(ctx context.Context, conn *sql.Conn) (map[string]bool, error) {
	rows, err := conn.QueryContext(ctx, `SELECT version FROM `+RevisionsTable)
	if err != nil {
		return nil, fmt.Errorf("migrations: read %s: %w", RevisionsTable, err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out[v] = true
	}
	return out, rows.Err()
}

// hasTables reports whether the current schema holds tables besides the revisions table,
// i.e. the database was migrated by ent's automatic migration before.
func hasTables(ctx context.Context, conn *sql.Conn) (bool, error) {
	var n int
	err := conn.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> $1`, RevisionsTable).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("migrations: inspect tables: %w", err)
	}
	return n > 0, nil
}

// Status lists the migrations and whether each is applied.
type Status struct {
	Version, Description string
	Applied              bool
}

// Pending returns the migrations not yet applied to db (all of them on a fresh database).
func Pending(ctx context.Context, db *sql.DB) ([]Status, error) {
	list, err := Files()
	if err != nil {
		return nil, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	applied := map[string]bool{}
	var exists bool
	if err := conn.QueryRowContext(ctx, `SELECT to_regclass($1) IS NOT NULL`, RevisionsTable).Scan(&exists); err != nil {
		return nil, err
	}
	if exists {
		if applied, err = appliedVersions(ctx, conn); err != nil {
			return nil, err
		}
	}
	var out []Status
	for _, f := range list {
		if !applied[f.Version()] {
			out = append(out, Status{Version: f.Version(), Description: f.Desc()})
		}
	}
	return out, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}
