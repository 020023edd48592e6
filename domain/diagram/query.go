package diagram

import (
	"fmt"
	"slices"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"
	"github.com/lib/pq"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
)

// lookupError turns the error of loading the record a view starts from into NOT_FOUND when the
// record does not exist or the viewer may not read it (a viewer must not learn that a rack it
// cannot see exists), and wraps anything else.
func lookupError(err error, what string, id int) error {
	if ent.IsNotFound(err) || isForbidden(err) {
		return apierr.NotFound("%s %d not found", what, id)
	}
	return fmt.Errorf("load %s %d: %w", what, id, err)
}

// isForbidden reports whether err is the privacy policy refusing a read.
func isForbidden(err error) bool {
	e, ok := apierr.As(err)
	return ok && e.Code == apierr.CodeForbidden
}

// optional drops a FORBIDDEN error: the part of a view the viewer may not read is left out
// (a tenant sees its VMs and networks on a network diagram, not the hosts and cables).
func optional(err error) error {
	if isForbidden(err) {
		return nil
	}
	return err
}

// idIn is the predicate "col is one of ids". On PostgreSQL it is col = ANY($1) with the ids as
// one array parameter, so no list of ids, however long, runs into the bind-parameter limit and
// the statement text does not depend on its length; elsewhere (SQLite) it is a plain IN list.
func idIn(s *sql.Selector, col string, ids []int) *sql.Predicate {
	if s.Dialect() != dialect.Postgres {
		return sql.InInts(s.C(col), ids...)
	}
	arr := make([]int64, len(ids))
	for i, id := range ids {
		arr[i] = int64(id)
	}
	qualified := s.C(col)
	return sql.P(func(b *sql.Builder) {
		b.WriteString(qualified).WriteString(" = ANY(").Arg(pq.Array(arr)).WriteString(")")
	})
}

// nullInt is a nullable foreign-key column read by Scan.
type nullInt = sql.NullInt64

// fk returns the value of a nullable foreign key, 0 when it is NULL.
func fk(n nullInt) int {
	if !n.Valid {
		return 0
	}
	return int(n.Int64)
}

// sortedKeys returns the keys of a set in increasing order, so that queries and answers do not
// depend on map iteration order.
func sortedKeys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
