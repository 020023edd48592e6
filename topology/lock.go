package topology

import (
	"context"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/ent/privacy"
)

// forUpdate locks the selected rows until the transaction ends on databases that support row
// locks (PostgreSQL); SQLite serializes writers anyway and has no FOR UPDATE.
func forUpdate(s *sql.Selector) {
	if s.Dialect() != dialect.SQLite {
		s.ForUpdate()
	}
}

// unrestricted lets an integrity check see every row, whatever the viewer may read: a device
// the viewer cannot see still occupies its units.
func unrestricted(ctx context.Context) context.Context {
	return privacy.DecisionContext(ctx, privacy.Allow)
}
