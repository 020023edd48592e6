// Package config reads VirtFlow's settings from flags and environment variables. Flags win
// over the environment; with nothing set the server runs self-contained (SQLite under
// ./data, an in-process Redis, the worker in the same process) on :8080.
package config

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"
)

// Config holds every setting of the server and worker processes.
type Config struct {
	Addr          string        // --addr, VIRTFLOW_ADDR: listen address
	DataDir       string        // --data-dir, VIRTFLOW_DATA_DIR: where the embedded database lives
	Demo          bool          // --demo, VIRTFLOW_DEMO: load the demo datacenter at start
	DatabaseURL   string        // DATABASE_URL: postgres://… switches from SQLite to PostgreSQL
	RedisURL      string        // REDIS_URL: redis://… switches from the in-process Redis
	AdminToken    string        // VIRTFLOW_ADMIN_TOKEN: bootstrap admin API token
	LogLevel      slog.Level    // --log-level, VIRTFLOW_LOG_LEVEL: debug, info, warn, error
	LogFormat     string        // --log-format, VIRTFLOW_LOG_FORMAT: text or json
	Introspection bool          // --introspection, VIRTFLOW_INTROSPECTION: allow GraphQL introspection
	ShutdownGrace time.Duration // time given to in-flight requests on shutdown
	// AuditRetention (--audit-retention, VIRTFLOW_AUDIT_RETENTION) is how long audit rows are
	// kept; zero, the default, keeps them forever.
	AuditRetention time.Duration
}

// Embedded reports whether the process runs on its embedded database and Redis.
func (c Config) Embedded() bool { return c.DatabaseURL == "" }

// Load parses args (without the program name) over the environment.
func Load(name string, args []string, getenv func(string) string, stderr io.Writer) (Config, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := Config{
		DatabaseURL:   getenv("DATABASE_URL"),
		RedisURL:      getenv("REDIS_URL"),
		AdminToken:    getenv("VIRTFLOW_ADMIN_TOKEN"),
		ShutdownGrace: 15 * time.Second,
	}
	demo, err := envBool(getenv, "VIRTFLOW_DEMO", false)
	if err != nil {
		return c, err
	}
	introspection, err := envBool(getenv, "VIRTFLOW_INTROSPECTION", true)
	if err != nil {
		return c, err
	}
	retention, err := time.ParseDuration(envOr(getenv, "VIRTFLOW_AUDIT_RETENTION", "0s"))
	if err != nil {
		return c, fmt.Errorf("VIRTFLOW_AUDIT_RETENTION: want a duration such as 8760h: %w", err)
	}
	level := envOr(getenv, "VIRTFLOW_LOG_LEVEL", "info")
	fs.StringVar(&c.Addr, "addr", envOr(getenv, "VIRTFLOW_ADDR", ":8080"), "listen address (VIRTFLOW_ADDR)")
	fs.StringVar(&c.DataDir, "data-dir", envOr(getenv, "VIRTFLOW_DATA_DIR", "./data"), "directory of the embedded SQLite database (VIRTFLOW_DATA_DIR)")
	fs.BoolVar(&c.Demo, "demo", demo, "load the demo datacenter at start; loading twice changes nothing (VIRTFLOW_DEMO)")
	fs.StringVar(&level, "log-level", level, "log level: debug, info, warn, error (VIRTFLOW_LOG_LEVEL)")
	fs.StringVar(&c.LogFormat, "log-format", envOr(getenv, "VIRTFLOW_LOG_FORMAT", "text"), "log format: text or json (VIRTFLOW_LOG_FORMAT)")
	fs.BoolVar(&c.Introspection, "introspection", introspection, "allow GraphQL introspection; switch off in production if wanted (VIRTFLOW_INTROSPECTION)")
	fs.DurationVar(&c.AuditRetention, "audit-retention", retention, "how long to keep audit rows, e.g. 8760h; 0 keeps them forever (VIRTFLOW_AUDIT_RETENTION)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if err := c.LogLevel.UnmarshalText([]byte(level)); err != nil {
		return c, fmt.Errorf("log level %q: want debug, info, warn or error", level)
	}
	if c.AuditRetention < 0 {
		return c, fmt.Errorf("audit retention must not be negative")
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return c, fmt.Errorf("log format %q: want text or json", c.LogFormat)
	}
	if c.DatabaseURL != "" && !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://") {
		return c, fmt.Errorf("DATABASE_URL must be a postgres:// URL")
	}
	return c, nil
}

// FromOS loads the configuration of the running process.
func FromOS(name string) (Config, error) {
	return Load(name, os.Args[1:], os.Getenv, os.Stderr)
}

// Logger builds the process logger the configuration asks for.
func (c Config) Logger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.LogLevel}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func envOr(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}

func envBool(getenv func(string) string, key string, def bool) (bool, error) {
	v := getenv(key)
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return def, fmt.Errorf("%s=%q: want true or false", key, v)
	}
	return b, nil
}
