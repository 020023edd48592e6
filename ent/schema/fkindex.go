package schema

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	sqlschema "entgo.io/ent/dialect/sql/schema"
)

// IndexForeignKeys is the migration hook that gives every foreign-key column an index, so
// that following an edge backwards (a rack's hosts, a host's ports, a tenant's VMs), a where
// filter on an edge and the ON DELETE check of a referenced row read an index instead of
// scanning the table. ent indexes a foreign key only when a schema declares it; PostgreSQL
// never does on its own. The hook adds an index named <table>_<column> to each foreign-key
// column that is not unique and does not already lead an index or the primary key, including the second column
// of many-to-many join tables, which a schema cannot declare. Pass it to every automatic
// migration:
//
//	client.Schema.Create(ctx, migrate.WithForeignKeys(true), sqlschema.WithHooks(schema.IndexForeignKeys))
//
// The tables it is given are left untouched (they are ent/migrate's package tables); the
// migration sees copies with the extra indexes.
func IndexForeignKeys(next sqlschema.Creator) sqlschema.Creator {
	return sqlschema.CreateFunc(func(ctx context.Context, tables ...*sqlschema.Table) error {
		return next.Create(ctx, WithForeignKeyIndexes(tables)...)
	})
}

// WithForeignKeyIndexes returns tables with an index added to every foreign-key column that
// does not lead an index or the primary key; tables that need none are returned as they are,
// the others as shallow copies.
func WithForeignKeyIndexes(tables []*sqlschema.Table) []*sqlschema.Table {
	out := make([]*sqlschema.Table, len(tables))
	for i, t := range tables {
		var extra []*sqlschema.Index
		for _, fk := range t.ForeignKeys {
			if len(fk.Columns) == 0 || fk.Columns[0].Unique || leadsIndex(t, fk.Columns[0].Name) {
				continue
			}
			c := fk.Columns[0]
			dup := false
			for _, x := range extra {
				dup = dup || x.Columns[0] == c
			}
			if !dup {
				extra = append(extra, &sqlschema.Index{Name: ForeignKeyIndexName(t.Name, c.Name), Columns: []*sqlschema.Column{c}})
			}
		}
		if len(extra) == 0 {
			out[i] = t
			continue
		}
		// A field-by-field copy: Table holds a mutex and must not be copied as a value.
		cp := sqlschema.NewTable(t.Name)
		for _, c := range t.Columns {
			cp.AddColumn(c)
		}
		cp.Schema, cp.PrimaryKey, cp.ForeignKeys = t.Schema, t.PrimaryKey, t.ForeignKeys
		cp.Annotation, cp.Comment, cp.View, cp.Pos = t.Annotation, t.Comment, t.View, t.Pos
		cp.Indexes = append(append([]*sqlschema.Index(nil), t.Indexes...), extra...)
		out[i] = cp
	}
	return out
}

// ForeignKeyIndexName is the name IndexForeignKeys gives the index of column in table:
// <table>_<column>, shortened with a hash to PostgreSQL's 63-byte identifier limit.
func ForeignKeyIndexName(table, column string) string {
	name := table + "_" + column
	if len(name) <= 63 {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return name[:54] + "_" + hex.EncodeToString(sum[:4])
}

// leadsIndex reports whether column is the first column of the table's primary key or of
// one of its indexes, which serves lookups by that column alone.
func leadsIndex(t *sqlschema.Table, column string) bool {
	if len(t.PrimaryKey) > 0 && t.PrimaryKey[0].Name == column {
		return true
	}
	for _, idx := range t.Indexes {
		if len(idx.Columns) > 0 && idx.Columns[0].Name == column {
			return true
		}
	}
	return false
}
