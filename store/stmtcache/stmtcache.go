// Package stmtcache keeps each PostgreSQL connection's parameterized statements prepared.
//
// lib/pq sends a statement with parameters in two round trips: Parse and Describe of an
// unnamed statement (to learn the parameter types), then Bind and Execute. Every ent query
// and write has parameters, so a request paid two round trips per statement, and PostgreSQL
// parsed and planned the same text again each time. A Connector here wraps lib/pq's: each
// connection it opens prepares a statement by name the first time it runs that text, and
// afterwards only binds and executes it (one round trip). The encoding of parameters and
// results is lib/pq's own prepared-statement path, the one its unnamed statements take too,
// so values go over the wire exactly as before.
//
// Each connection keeps at most Size statements, least recently used first out (closing a
// statement costs one round trip). Statements without parameters keep lib/pq's simple
// protocol, a single round trip already. A cached statement PostgreSQL no longer accepts
// (a DDL changed its result type, or it was deallocated) is dropped, so that its next use
// prepares it again; the failing call returns PostgreSQL's error as it would have anyway.
package stmtcache

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"github.com/lib/pq"
)

// DefaultSize is how many statements a connection keeps when Connector.Size is 0: more than
// the distinct statements of the API's hot paths, few enough that 32 connections hold a few
// megabytes of plans on the server.
const DefaultSize = 512

// Connector opens connections through Base that keep their statements prepared.
type Connector struct {
	// Base opens the real connections (a *pq.Connector).
	Base driver.Connector
	// Size bounds the statements kept per connection (DefaultSize when 0).
	Size int
}

var _ driver.Connector = (*Connector)(nil)

// Connect implements driver.Connector.
func (c *Connector) Connect(ctx context.Context) (driver.Conn, error) {
	base, err := c.Base.Connect(ctx)
	if err != nil {
		return nil, err
	}
	size := c.Size
	if size <= 0 {
		size = DefaultSize
	}
	b, ok := base.(baseConn)
	if !ok {
		_ = base.Close()
		return nil, fmt.Errorf("stmtcache: %T is not a lib/pq connection", base)
	}
	cn := &conn{baseConn: b}
	cn.stmts, err = simplelru.NewLRU(size, func(_ string, st driver.Stmt) {
		if cn.keepOnServer {
			return // the session's end frees it (Close, drop)
		}
		// A failed close leaves the connection broken (lib/pq marks it bad), and
		// database/sql then discards it with every statement it held.
		_ = st.Close()
	})
	if err != nil {
		_ = base.Close()
		return nil, err
	}
	return cn, nil
}

// Driver implements driver.Connector.
func (c *Connector) Driver() driver.Driver { return c.Base.Driver() }

// baseConn is what database/sql uses of a lib/pq connection.
type baseConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.QueryerContext
	driver.ExecerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
	driver.NamedValueChecker
}

// conn is one connection with its prepared statements. database/sql uses a connection
// from one goroutine at a time, so the cache needs no lock.
type conn struct {
	baseConn
	stmts *simplelru.LRU[string, driver.Stmt]
	// keepOnServer makes an eviction forget a statement without closing it on the server:
	// the connection is closing, or the server no longer accepts the statement.
	keepOnServer bool
}

var (
	_ driver.ConnBeginTx        = (*conn)(nil)
	_ driver.ConnPrepareContext = (*conn)(nil)
	_ driver.QueryerContext     = (*conn)(nil)
	_ driver.ExecerContext      = (*conn)(nil)
	_ driver.Pinger             = (*conn)(nil)
	_ driver.SessionResetter    = (*conn)(nil)
	_ driver.Validator          = (*conn)(nil)
	_ driver.NamedValueChecker  = (*conn)(nil)
)

// cacheable reports whether query runs through a kept statement: it has parameters (without
// any, lib/pq's simple protocol is one round trip already) and is not a COPY.
func cacheable(query string, args []driver.NamedValue) bool {
	return len(args) > 0 && !hasPrefixFold(strings.TrimLeft(query, " \t\r\n"), "COPY")
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// stmt returns the kept statement of query, preparing it on first use.
func (c *conn) stmt(ctx context.Context, query string) (driver.Stmt, error) {
	if st, ok := c.stmts.Get(query); ok {
		return st, nil
	}
	st, err := c.baseConn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.stmts.Add(query, st)
	return st, nil
}

// drop forgets query's statement when err says PostgreSQL no longer accepts it as
// prepared: a statement that does not exist (26000), or a cached plan whose result type a
// DDL changed (0A000).
func (c *conn) drop(query string, err error) {
	var pe *pq.Error
	if errors.As(err, &pe) && (pe.Code == "26000" || pe.Code == "0A000") {
		// No Close: in a failed transaction it would fail too, and the session's end
		// frees the name.
		c.keepOnServer = true
		c.stmts.Remove(query)
		c.keepOnServer = false
	}
}

// QueryContext implements driver.QueryerContext.
func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if !cacheable(query, args) {
		return c.baseConn.QueryContext(ctx, query, args)
	}
	st, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	rows, err := st.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		c.drop(query, err)
	}
	return rows, err
}

// ExecContext implements driver.ExecerContext.
func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if !cacheable(query, args) {
		return c.baseConn.ExecContext(ctx, query, args)
	}
	st, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	res, err := st.(driver.StmtExecContext).ExecContext(ctx, args)
	if err != nil {
		c.drop(query, err)
	}
	return res, err
}

// Close implements driver.Conn. The server frees the connection's statements with it.
func (c *conn) Close() error {
	c.keepOnServer = true
	c.stmts.Purge()
	return c.baseConn.Close()
}
