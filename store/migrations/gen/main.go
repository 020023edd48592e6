// Command gen writes a new versioned migration for the difference between the migration
// files and the ent schema. It needs a PostgreSQL server to replay the files on: it creates a
// scratch database on $VIRTFLOW_TEST_POSTGRES (default postgres://postgres@127.0.0.1:5432/postgres)
// and drops it afterwards. Run it through `make migrations NAME=short_description` from the
// repository root.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"regexp"

	"ariga.io/atlas/sql/migrate"
	_ "github.com/lib/pq"

	"github.com/virtflow/virtflow/internal/testkit/testdb"
	"github.com/virtflow/virtflow/store/migrations"
)

func main() {
	dirPath := flag.String("dir", "store/migrations", "migration directory")
	name := flag.String("name", "", "short description of the change, e.g. add_join_tokens (letters, digits, _)")
	flag.Parse()
	if err := run(*dirPath, *name); err != nil {
		fmt.Fprintln(os.Stderr, "migrations:", err)
		os.Exit(1)
	}
}

func run(dirPath, name string) error {
	if !regexp.MustCompile(`^[a-z0-9_]+$`).MatchString(name) {
		return fmt.Errorf("-name %q: want a short description of lower-case letters, digits and _", name)
	}
	ctx := context.Background()
	dir, err := migrate.NewLocalDir(dirPath)
	if err != nil {
		return err
	}
	// Merging two branches' migration files conflicts in atlas.sum only: recompute it.
	if err := migrations.Rehash(dir); err != nil {
		return err
	}
	dsn, drop, err := testdb.Create(ctx)
	if err != nil {
		return fmt.Errorf("scratch database: %w", err)
	}
	defer drop()
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	wrote, err := migrations.Diff(ctx, db, dir, name)
	if err != nil {
		return err
	}
	if !wrote {
		fmt.Println("migrations: the files already match the ent schema; nothing written")
		return nil
	}
	fmt.Println("migrations: wrote a new migration to", dirPath)
	return nil
}
