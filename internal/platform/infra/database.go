package infra

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	sqlschema "entgo.io/ent/dialect/sql/schema"
	"github.com/XSAM/otelsql"
	"github.com/lib/pq"
	"go.opentelemetry.io/otel/attribute"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	_ "modernc.org/sqlite" // pure-Go SQLite driver "sqlite"

	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/migrate"
	_ "github.com/virtflow/virtflow/ent/runtime" // ent hooks and defaults
	"github.com/virtflow/virtflow/ent/schema"
	"github.com/virtflow/virtflow/internal/platform/telemetry"
	"github.com/virtflow/virtflow/store/migrations"
	"github.com/virtflow/virtflow/store/stmtcache"
)

// MigrateOptions are the options of VirtFlow's automatic migration: foreign keys, each with
// an index (schema.IndexForeignKeys).
func MigrateOptions() []sqlschema.MigrateOption {
	return []sqlschema.MigrateOption{migrate.WithForeignKeys(true), sqlschema.WithHooks(schema.IndexForeignKeys)}
}

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

// Report is the state of the connection pool for /readyz: its size, the connections in use
// and idle, how often and how long requests waited for one, and whether it is saturated
// (every connection in use: the next request waits).
func (d *Database) Report() map[string]any {
	s := d.DB.Stats()
	return map[string]any{
		"maxOpen": s.MaxOpenConnections, "open": s.OpenConnections, "inUse": s.InUse, "idle": s.Idle,
		"waitCount": s.WaitCount, "waitSeconds": s.WaitDuration.Seconds(),
		"saturated": s.MaxOpenConnections > 0 && s.InUse >= s.MaxOpenConnections,
	}
}

// OpenDatabase opens PostgreSQL when databaseURL is set, otherwise the SQLite file
// virtflow.db in dataDir (created if missing), and migrates the schema, logging nothing.
func OpenDatabase(ctx context.Context, databaseURL, dataDir string) (*Database, error) {
	return OpenDatabaseWith(ctx, databaseURL, dataDir, OpenOptions{})
}

// OpenOptions tune OpenDatabaseWith.
type OpenOptions struct {
	// Log receives the migrations applied; nil logs nothing.
	Log *slog.Logger
	// NoMigrate leaves the schema alone (the caller migrates, or checks).
	NoMigrate bool
	// Tracing, when enabled, traces every statement (otelsql): a span per query and
	// transaction, the child of the request or task that ran it. Off or nil: the driver is
	// used as it is.
	Tracing *telemetry.Tracing
	// MaxConns bounds the PostgreSQL pool (DefaultMaxConns when 0); every connection is kept
	// idle once opened.
	MaxConns int
	// NoStatementCache sends statements as lib/pq does, unprepared (for PgBouncer in
	// transaction mode before 1.21, which cannot keep a connection's named statements);
	// on SQLite, compiles every statement again.
	NoStatementCache bool
}

// DefaultMaxConns is the PostgreSQL pool of a process that does not choose one (tests, tools).
const DefaultMaxConns = 16

// openSQL opens driver at dsn, through otelsql when tracing is on. Unless noStmtCache,
// PostgreSQL connections keep their parameterized statements prepared (package stmtcache):
// one round trip per statement instead of lib/pq's two; SQLite connections keep theirs
// compiled.
func openSQL(driverName, dsn string, tr *telemetry.Tracing, system attribute.KeyValue, noStmtCache bool) (*sql.DB, error) {
	var connector driver.Connector
	switch {
	case driverName == "postgres":
		pc, err := pq.NewConnector(dsn)
		if err != nil {
			return nil, err
		}
		connector = pc
		if !noStmtCache {
			connector = &stmtcache.Connector{Base: pc}
		}
	case driverName == "sqlite" && !noStmtCache:
		// The registered driver (with whatever was registered on it), its connections
		// keeping their compiled statements.
		reg, err := sql.Open(driverName, dsn)
		if err != nil {
			return nil, err
		}
		connector = &stmtcache.SQLite{Base: reg.Driver(), DSN: dsn}
		_ = reg.Close() // never connected
	}
	if tr == nil || !tr.Enabled() {
		if connector != nil {
			return sql.OpenDB(connector), nil
		}
		return sql.Open(driverName, dsn)
	}
	opts := []otelsql.Option{
		otelsql.WithTracerProvider(tr.Provider),
		otelsql.WithMeterProvider(metricnoop.NewMeterProvider()),
		otelsql.WithAttributes(system),
		otelsql.WithSpanOptions(otelsql.SpanOptions{OmitConnResetSession: true, OmitRows: true, OmitConnectorConnect: true}),
	}
	if connector != nil {
		return otelsql.OpenDB(connector, opts...), nil
	}
	return otelsql.Open(driverName, dsn, opts...)
}

// OpenDatabaseWith is OpenDatabase with options.
//
// PostgreSQL is migrated by the versioned migrations of package migrations, under an advisory
// lock, so processes starting together migrate once. The embedded SQLite database, a single
// process's, is migrated by ent's automatic migration, which creates missing tables, columns
// and indexes and never drops anything.
func OpenDatabaseWith(ctx context.Context, databaseURL, dataDir string, o OpenOptions) (*Database, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	var (
		db  *sql.DB
		drv string
		err error
	)
	if databaseURL != "" {
		drv = dialect.Postgres
		db, err = openSQL("postgres", databaseURL, o.Tracing, semconv.DBSystemPostgreSQL, o.NoStatementCache)
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		// As many idle connections as open ones: under a burst (5,000 node agents
		// heartbeating) a pool that keeps fewer closes connections only to open them again a
		// moment later, and every new PostgreSQL backend is a fork plus cold catalog caches.
		// The size is the process's (config: 16 for a server, 8 for a worker), so that
		// replicas add up under PostgreSQL's max_connections.
		n := o.MaxConns
		if n <= 0 {
			n = DefaultMaxConns
		}
		db.SetMaxOpenConns(n)
		db.SetMaxIdleConns(n)
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
		db, err = openSQL("sqlite", dsn, o.Tracing, semconv.DBSystemSqlite, o.NoStatementCache)
		if err != nil {
			return nil, fmt.Errorf("open sqlite %s: %w", path, err)
		}
		// Idle connections are kept (database/sql keeps 2 by default): each holds its
		// compiled statements (stmtcache.SQLite), lost when a connection closes.
		db.SetMaxOpenConns(8)
		db.SetMaxIdleConns(8)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pingCtx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("connect to %s database: %w", drv, err)
	}
	client := ent.NewClient(ent.Driver(entsql.OpenDB(drv, db)))
	if !o.NoMigrate {
		if err := migrateSchema(ctx, client, db, drv, o.Log); err != nil {
			_ = client.Close()
			return nil, err
		}
	}
	return &Database{Client: client, DB: db, Dialect: drv}, nil
}

func migrateSchema(ctx context.Context, client *ent.Client, db *sql.DB, drv string, log *slog.Logger) error {
	if drv == dialect.SQLite {
		if err := client.Schema.Create(ctx, MigrateOptions()...); err != nil {
			return fmt.Errorf("migrate schema: %w", err)
		}
		return nil
	}
	res, err := migrations.Apply(ctx, db, log)
	if err != nil {
		return err
	}
	if len(res.Applied) > 0 || res.Baselined != "" {
		log.Info("database migrated", "version", res.Current, "applied", len(res.Applied), "baseline", res.Baselined,
			"took", res.Took.Round(time.Millisecond))
	}
	return nil
}
