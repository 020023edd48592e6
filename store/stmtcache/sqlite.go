package stmtcache

import (
	"context"
	"database/sql/driver"
	"fmt"
	"reflect"
	"strings"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// SQLiteSize is how many statements an SQLite connection keeps when SQLite.Size is 0:
// the hot paths' distinct statements with room to spare; each holds its compiled program.
const SQLiteSize = 256

// SQLite opens connections of the embedded database (modernc.org/sqlite) that keep their
// statements compiled. Without it, every Exec and Query compiles its SQL again
// (sqlite3_prepare_v2) and throws the program away afterwards: under the demo's creates a
// sixth of the process's CPU. modernc's statements keep their compiled program and reset
// it after each use (a Rows resets it when closed), so a connection here keeps a prepared
// statement per SQL text, at most Size, least recently used first out, and runs each call
// through it. SQLite recompiles a kept statement itself when the schema changed. A
// statement whose rows are still open when the same text runs again is not shared: that
// call takes the driver's ordinary path. Parameter conversion is database/sql's, as
// before (the wrapper adds no NamedValueChecker).
type SQLite struct {
	// Base opens the real connections (modernc's registered "sqlite" driver) at DSN.
	Base driver.Driver
	DSN  string
	// Size bounds the statements kept per connection (SQLiteSize when 0).
	Size int
}

var _ driver.Connector = (*SQLite)(nil)

// Connect implements driver.Connector.
func (c *SQLite) Connect(context.Context) (driver.Conn, error) {
	base, err := c.Base.Open(c.DSN)
	if err != nil {
		return nil, err
	}
	b, ok := base.(sqliteBase)
	if !ok {
		_ = base.Close()
		return nil, fmt.Errorf("stmtcache: %T is not a modernc.org/sqlite connection", base)
	}
	size := c.Size
	if size <= 0 {
		size = SQLiteSize
	}
	cn := &sqliteConn{sqliteBase: b}
	cn.stmts, err = simplelru.NewLRU(size, func(_ string, st *sqliteStmt) {
		if st.busy {
			st.closeWhenDone = true // its rows are open: closed with them
			return
		}
		_ = st.Close()
	})
	if err != nil {
		_ = base.Close()
		return nil, err
	}
	return cn, nil
}

// Driver implements driver.Connector.
func (c *SQLite) Driver() driver.Driver { return c.Base }

// sqliteBase is what database/sql uses of a modernc.org/sqlite connection.
type sqliteBase interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.QueryerContext
	driver.ExecerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// sqliteConn is one connection with its kept statements. database/sql uses a connection
// from one goroutine at a time (a Rows included), so nothing here needs a lock.
type sqliteConn struct {
	sqliteBase
	stmts *simplelru.LRU[string, *sqliteStmt]
}

// sqliteStmt is a kept statement; busy while rows read from it are open.
type sqliteStmt struct {
	driver.Stmt
	busy, closeWhenDone bool
}

var (
	_ driver.ConnBeginTx        = (*sqliteConn)(nil)
	_ driver.ConnPrepareContext = (*sqliteConn)(nil)
	_ driver.QueryerContext     = (*sqliteConn)(nil)
	_ driver.ExecerContext      = (*sqliteConn)(nil)
	_ driver.Pinger             = (*sqliteConn)(nil)
	_ driver.SessionResetter    = (*sqliteConn)(nil)
	_ driver.Validator          = (*sqliteConn)(nil)
)

// stmt returns the kept statement of query, preparing it on first use; nil when it is
// busy or not kept (the caller takes the ordinary path): statements without parameters
// other than a SELECT (schema changes, pragmas, scripts) are not kept.
func (c *sqliteConn) stmt(ctx context.Context, query string, args []driver.NamedValue) (*sqliteStmt, error) {
	if len(args) == 0 && !hasPrefixFold(strings.TrimLeft(query, " \t\r\n"), "SELECT") {
		return nil, nil
	}
	if st, ok := c.stmts.Get(query); ok {
		if st.busy {
			return nil, nil
		}
		return st, nil
	}
	ds, err := c.sqliteBase.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if _, ok := ds.(driver.StmtQueryContext); !ok {
		_ = ds.Close()
		return nil, nil
	}
	if _, ok := ds.(driver.StmtExecContext); !ok {
		_ = ds.Close()
		return nil, nil
	}
	st := &sqliteStmt{Stmt: ds}
	c.stmts.Add(query, st)
	return st, nil
}

// forget drops query's statement after an error, so that its next use starts afresh.
func (c *sqliteConn) forget(query string, st *sqliteStmt) {
	if cur, ok := c.stmts.Peek(query); ok && cur == st {
		c.stmts.Remove(query) // closes it, or marks it to close with its rows
	}
}

// QueryContext implements driver.QueryerContext.
func (c *sqliteConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	st, err := c.stmt(ctx, query, args)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return c.sqliteBase.QueryContext(ctx, query, args)
	}
	rows, err := st.Stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		c.forget(query, st)
		return nil, err
	}
	st.busy = true
	return &sqliteRows{Rows: rows, st: st}, nil
}

// ExecContext implements driver.ExecerContext.
func (c *sqliteConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	st, err := c.stmt(ctx, query, args)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return c.sqliteBase.ExecContext(ctx, query, args)
	}
	res, err := st.Stmt.(driver.StmtExecContext).ExecContext(ctx, args)
	if err != nil {
		c.forget(query, st)
	}
	return res, err
}

// Close implements driver.Conn: the kept statements are finalized before the connection.
func (c *sqliteConn) Close() error {
	c.stmts.Purge()
	return c.sqliteBase.Close()
}

// sqliteRows frees its statement for the next call when closed.
type sqliteRows struct {
	driver.Rows
	st *sqliteStmt
}

// Close implements driver.Rows.
func (r *sqliteRows) Close() error {
	err := r.Rows.Close()
	r.st.busy = false
	if r.st.closeWhenDone {
		if cerr := r.st.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// The column types of the driver's rows, which database/sql's ColumnTypes asks for.

// ColumnTypeDatabaseTypeName implements driver.RowsColumnTypeDatabaseTypeName.
func (r *sqliteRows) ColumnTypeDatabaseTypeName(i int) string {
	if t, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return t.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

// ColumnTypeLength implements driver.RowsColumnTypeLength.
func (r *sqliteRows) ColumnTypeLength(i int) (int64, bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeLength); ok {
		return t.ColumnTypeLength(i)
	}
	return 0, false
}

// ColumnTypeNullable implements driver.RowsColumnTypeNullable.
func (r *sqliteRows) ColumnTypeNullable(i int) (nullable, ok bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeNullable); ok {
		return t.ColumnTypeNullable(i)
	}
	return false, false
}

// ColumnTypePrecisionScale implements driver.RowsColumnTypePrecisionScale.
func (r *sqliteRows) ColumnTypePrecisionScale(i int) (precision, scale int64, ok bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypePrecisionScale); ok {
		return t.ColumnTypePrecisionScale(i)
	}
	return 0, 0, false
}

// ColumnTypeScanType implements driver.RowsColumnTypeScanType.
func (r *sqliteRows) ColumnTypeScanType(i int) reflect.Type {
	if t, ok := r.Rows.(driver.RowsColumnTypeScanType); ok {
		return t.ColumnTypeScanType(i)
	}
	return reflect.TypeFor[any]()
}
