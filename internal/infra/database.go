package infra

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	_ "github.com/lib/pq"  // PostgreSQL driver "postgres"
	_ "modernc.org/sqlite" // pure-Go SQLite driver "sqlite"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/migrate"
	_ "github.com/virtflow/virtflow/ent/runtime" // ent hooks and defaults
)

// Database is an open ent client and the *sql.DB beneath it.
type Database struct {
	Client  *ent.Client
	DB      *sql.DB
	Dialect string
}

// Close closes the client and its connections.
func (d *Database) Close() error { return d.Client.Close() }

// Ping checks the database answers.
func (d *Database) Ping(ctx context.Context) error { return d.DB.PingContext(ctx) }

// OpenDatabase opens PostgreSQL when databaseURL is set, otherwise the SQLite file
// virtflow.db in dataDir (created if missing), and migrates the schema.
//
// Migration is ent's automatic migration: it creates missing tables, columns and indexes and
// never drops anything, so upgrading keeps data. Versioned migration files (ent's migrate with
// Atlas) are planned; see README "Upgrades".
func OpenDatabase(ctx context.Context, databaseURL, dataDir string) (*Database, error) {
	var (
		db  *sql.DB
		drv string
		err error
	)
	if databaseURL != "" {
		drv = dialect.Postgres
		db, err = sql.Open("postgres", databaseURL)
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		// As many idle connections as open ones: under a burst (5,000 node agents
		// heartbeating) a pool that keeps fewer closes connections only to open them again a
		// moment later, and every new PostgreSQL backend is a fork plus cold catalog caches.
		// 32 stays well under PostgreSQL's default max_connections of 100.
		db.SetMaxOpenConns(32)
		db.SetMaxIdleConns(32)
		db.SetConnMaxIdleTime(5 * time.Minute)
	} else {
		drv = dialect.SQLite
		if err := os.MkdirAll(dataDir, 0o750); err != nil {
			return nil, fmt.Errorf("create data dir: %w", err)
		}
		path := filepath.Join(dataDir, "virtflow.db")
		// WAL lets readers run beside the writer; immediate transactions and a busy timeout
		// make concurrent writers wait their turn instead of failing.
		dsn := "file:" + path + "?_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)&_txlock=immediate"
		db, err = sql.Open("sqlite", dsn)
		if err != nil {
			return nil, fmt.Errorf("open sqlite %s: %w", path, err)
		}
		db.SetMaxOpenConns(8)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pingCtx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("connect to %s database: %w", drv, err)
	}
	client := ent.NewClient(ent.Driver(entsql.OpenDB(drv, db)))
	if err := client.Schema.Create(ctx, migrate.WithForeignKeys(true)); err != nil {
		_ = client.Close()
		return nil, fmt.Errorf("migrate schema: %w", err)
	}
	return &Database{Client: client, DB: db, Dialect: drv}, nil
}
