package migrations

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"ariga.io/atlas/sql/migrate"
	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"entgo.io/ent/dialect/sql/schema"

	entmigrate "github.com/virtflow/virtflow/ent/migrate"
	vfschema "github.com/virtflow/virtflow/ent/schema"
)

// Diff replays the migration directory dir on the empty PostgreSQL database devDB (a scratch
// database, changed by the call), compares the result with the ent schema and, when they
// differ, writes the difference to dir as a new migration file described by name and
// updates dir's atlas.sum. It reports whether it wrote a file.
func Diff(ctx context.Context, devDB *sql.DB, dir migrate.Dir, name string) (bool, error) {
	m, err := schema.NewMigrate(entsql.OpenDB(dialect.Postgres, devDB),
		schema.WithDir(dir),
		schema.WithMigrationMode(schema.ModeReplay),
		schema.WithDialect(dialect.Postgres),
		schema.WithFormatter(migrate.DefaultFormatter),
		schema.WithForeignKeys(true),
		schema.WithErrNoPlan(true),
	)
	if err != nil {
		return false, fmt.Errorf("migrations: %w", err)
	}
	switch err := m.NamedDiff(ctx, name, vfschema.WithForeignKeyIndexes(entmigrate.Tables)...); {
	case errors.Is(err, migrate.ErrNoPlan):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("migrations: diff: %w", err)
	}
	return true, nil
}

// Rehash rewrites dir's atlas.sum from the files in it: after a merge brought migration files
// from two branches, the sum file is recomputed rather than merged by hand.
func Rehash(dir migrate.Dir) error {
	sum, err := dir.Checksum()
	if err != nil {
		return fmt.Errorf("migrations: checksum: %w", err)
	}
	return migrate.WriteSumFile(dir, sum)
}
