package topology

import (
	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"
)

// forUpdate locks the selected rows until the transaction ends on databases that support row
// locks (PostgreSQL); SQLite serializes writers anyway and has no FOR UPDATE.
func forUpdate(s *sql.Selector) {
	if s.Dialect() != dialect.SQLite {
		s.ForUpdate()
	}
}
