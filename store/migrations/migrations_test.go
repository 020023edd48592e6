package migrations

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"ariga.io/atlas/sql/migrate"
	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"entgo.io/ent/dialect/sql/schema"
	_ "github.com/lib/pq"

	entmigrate "github.com/virtflow/virtflow/ent/migrate"
	vfschema "github.com/virtflow/virtflow/ent/schema"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func open(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// memDir copies the embedded migration files into a fresh in-memory Atlas directory.
func memDir(t testing.TB) migrate.Dir {
	t.Helper()
	list, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	d := migrate.OpenMemDir(fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano()))
	t.Cleanup(func() { _ = d.Close() })
	if err := d.CopyFiles(list); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestMigrationsMatchSchema fails while the ent schema and the migration files disagree:
// after a change to ent/schema, `make migrations NAME=...` writes the missing migration.
func TestMigrationsMatchSchema(t *testing.T) {
	ctx := context.Background()
	dir := memDir(t)
	wrote, err := Diff(ctx, open(t, testdb.New(t)), dir, "pending")
	if err != nil {
		t.Fatal(err)
	}
	if wrote {
		files, _ := dir.Files()
		last := files[len(files)-1]
		t.Fatalf("the ent schema differs from migrations/: run `make migrations NAME=describe_the_change` and commit the new file. Missing:\n%s", last.Bytes())
	}
}

// inSync fails the test unless the database dsn holds exactly the ent schema.
func inSync(t *testing.T, db *sql.DB) {
	t.Helper()
	dir := migrate.OpenMemDir(fmt.Sprintf("insync-%s-%d", t.Name(), time.Now().UnixNano()))
	defer dir.Close()
	m, err := schema.NewMigrate(entsql.OpenDB(dialect.Postgres, db), schema.WithDir(dir),
		schema.WithMigrationMode(schema.ModeInspect), schema.WithDialect(dialect.Postgres),
		schema.WithFormatter(migrate.DefaultFormatter), schema.WithErrNoPlan(true))
	if err != nil {
		t.Fatal(err)
	}
	err = m.NamedDiff(context.Background(), "drift", vfschema.WithForeignKeyIndexes(entmigrate.Tables)...)
	if errors.Is(err, migrate.ErrNoPlan) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	files, _ := dir.Files()
	plan := string(files[len(files)-1].Bytes())
	if rest := withoutRespelledPredicates(t, db, plan); strings.TrimSpace(rest) != "" {
		t.Fatalf("the migrated database differs from the ent schema:\n%s", plan)
	}
}

// indexStmt matches the statements an inspection plans for a partial index it wants again:
// its drop, and its create with the predicate as ent spells it.
var (
	dropIndexStmt   = regexp.MustCompile(`(?m)^DROP INDEX "([^"]+)";$`)
	createIndexStmt = regexp.MustCompile(`(?m)^CREATE (?:UNIQUE )?INDEX "([^"]+)" ON .* WHERE (.*);$`)
)

// withoutRespelledPredicates returns plan without the drop and re-create of partial indexes
// whose predicate differs from the database's only in spelling. Atlas's inspection compares
// a partial index's predicate as text, and PostgreSQL keeps it deparsed, with casts and
// parentheses ("(((status)::text = 'OPEN'::text) AND …)" for "status = 'OPEN' AND …"), which
// SQLite would not take in ent's schema. Both are compared with casts, parentheses and
// spaces removed; any other difference stays in the plan. Comment lines are dropped.
func withoutRespelledPredicates(t *testing.T, db *sql.DB, plan string) string {
	t.Helper()
	squash := strings.NewReplacer("::text", "", "(", "", ")", "", " ", "")
	for _, m := range createIndexStmt.FindAllStringSubmatch(plan, -1) {
		var pred string
		if err := db.QueryRow(`SELECT pg_get_expr(i.indpred, i.indrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
			WHERE c.relname = $1`, m[1]).Scan(&pred); err != nil {
			continue // not in the database: a real difference
		}
		if squash.Replace(pred) == squash.Replace(m[2]) {
			plan = strings.Replace(plan, m[0], "", 1)
			plan = dropIndexStmt.ReplaceAllStringFunc(plan, func(s string) string {
				if dropIndexStmt.FindStringSubmatch(s)[1] == m[1] {
					return ""
				}
				return s
			})
		}
	}
	var rest []string
	for _, l := range strings.Split(plan, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "--") {
			rest = append(rest, l)
		}
	}
	return strings.Join(rest, "\n")
}

// TestConcurrentFirstStarts starts several migrators at once on a fresh database, as
// `docker compose up` starts a server and workers: all succeed, each migration runs once.
func TestConcurrentFirstStarts(t *testing.T) {
	const n = 6
	dsn := testdb.New(t)
	list, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		applied = map[string]int{}
		errs    []error
	)
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := sql.Open("postgres", dsn) // one pool per "process"
			if err != nil {
				panic(err)
			}
			defer db.Close()
			<-start
			res, err := Apply(context.Background(), db, quiet())
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			}
			for _, v := range res.Applied {
				applied[v]++
			}
		}()
	}
	close(start)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d of %d concurrent migrators failed: %v", len(errs), n, errs)
	}
	for _, f := range list {
		if applied[f.Version()] != 1 {
			t.Errorf("migration %s applied %d times, want once", f.Version(), applied[f.Version()])
		}
	}
	db := open(t, dsn)
	res, err := Apply(context.Background(), db, quiet())
	if err != nil || len(res.Applied) != 0 || res.Current != list[len(list)-1].Version() {
		t.Fatalf("a later start: %+v, %v; want nothing applied at version %s", res, err, list[len(list)-1].Version())
	}
	pending, err := Pending(context.Background(), db)
	if err != nil || len(pending) != 0 {
		t.Fatalf("Pending = %v, %v; want none", pending, err)
	}
	inSync(t, db)
}

// TestUpgradeFromAutoMigrated takes a database of the last release before versioned
// migrations (testdata/previous_release.sql: the schema ent's automatic migration created,
// dumped with pg_dump) holding data, migrates it, and checks the schema is current and the
// data still there.
func TestUpgradeFromAutoMigrated(t *testing.T) {
	ctx := context.Background()
	dsn := testdb.New(t)
	dump, err := os.ReadFile("testdata/previous_release.sql")
	if err != nil {
		t.Fatal(err)
	}
	// The dump sets the session's search_path: load it on a pool of its own.
	loader := open(t, dsn)
	loader.SetMaxOpenConns(1)
	if _, err := loader.ExecContext(ctx, string(dump)); err != nil {
		t.Fatalf("load the previous release's schema: %v", err)
	}
	_ = loader.Close()
	db := open(t, dsn)
	now := time.Now().UTC().Truncate(time.Second)
	seed := []string{
		`INSERT INTO regions (id, created_at, updated_at, name, description, status) VALUES (1, $1, $1, 'tokyo1', 'kept', 'OPEN')`,
		`INSERT INTO tenants (id, created_at, updated_at, name) VALUES (2, $1, $1, 'acme')`,
	}
	for _, q := range seed {
		if _, err := db.ExecContext(ctx, q, now); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	res, err := Apply(ctx, db, quiet())
	if err != nil {
		t.Fatal(err)
	}
	list, _ := Files()
	if res.Baselined != list[0].Version() || res.Current != list[len(list)-1].Version() || len(res.Applied) != len(list)-1 {
		t.Fatalf("upgrade: %+v; want baseline %s, then the %d later migrations", res, list[0].Version(), len(list)-1)
	}
	var desc, tenant string
	if err := db.QueryRowContext(ctx, `SELECT description FROM regions WHERE name = 'tokyo1'`).Scan(&desc); err != nil || desc != "kept" {
		t.Fatalf("region after upgrade: %q, %v", desc, err)
	}
	if err := db.QueryRowContext(ctx, `SELECT name FROM tenants WHERE id = 2`).Scan(&tenant); err != nil || tenant != "acme" {
		t.Fatalf("tenant after upgrade: %q, %v", tenant, err)
	}
	inSync(t, db)
}

func TestSumGuardsTheFiles(t *testing.T) {
	list, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) == 0 || !strings.HasSuffix(list[0].Name(), "_baseline.sql") {
		t.Fatalf("the first migration must be the baseline, got %v", list)
	}
	d := memDir(t)
	f := list[len(list)-1]
	if err := d.WriteFile(f.Name(), append(f.Bytes(), "\n-- edited by hand\n"...)); err != nil {
		t.Fatal(err)
	}
	if _, err := filesOf(d); err == nil || !strings.Contains(err.Error(), "make migrations") {
		t.Fatalf("an edited file passed the checksum: %v", err)
	}
}

// BenchmarkApplyFresh measures migrating an empty database to the newest version.
func BenchmarkApplyFresh(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		dsn, drop, err := testdb.Create(context.Background())
		if err != nil {
			testdb.Unavailable(b, err)
		}
		db, _ := sql.Open("postgres", dsn)
		b.StartTimer()
		if _, err := Apply(context.Background(), db, quiet()); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		_ = db.Close()
		drop()
		b.StartTimer()
	}
}
