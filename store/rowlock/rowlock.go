// Package rowlock locks selected rows for the rest of a transaction in a way that works on
// both of VirtFlow's databases.
package rowlock

import (
	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"
)

// ForUpdate makes a query lock the rows it selects until the transaction ends (SELECT … FOR
// UPDATE) on PostgreSQL. SQLite has no row locks and no FOR UPDATE, and needs none: VirtFlow
// opens its transactions there with BEGIN IMMEDIATE, so writers run one at a time. Use it as
// a query modifier: client.Rack.Query().Where(…).Modify(rowlock.ForUpdate).Only(ctx).
func ForUpdate(s *sql.Selector) {
	if s.Dialect() != dialect.SQLite {
		s.ForUpdate()
	}
}
