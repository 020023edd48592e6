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

	"github.com/virtflow/virtflow/nodemonitor"
	"github.com/virtflow/virtflow/scheduler"
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
	// Placement (--placement, VIRTFLOW_PLACEMENT) is "spread" (least-allocated nodes first,
	// the default) or "binpack" (most-allocated first).
	Placement string
	// ScorerWeights (--scorer-weights, VIRTFLOW_SCORER_WEIGHTS, e.g. "SpreadAZ=2,NodeLabelSoftAffinity=4")
	// override the weights of the placement scorers; a weight of 0 switches a scorer off.
	ScorerWeights map[string]float64
	// RequireQuota (--require-quota, VIRTFLOW_REQUIRE_QUOTA) refuses placements in host groups
	// where the tenant has no quota, instead of treating a missing quota as unlimited.
	RequireQuota bool
	// NodeNotReadyAfter (--node-not-ready-after, VIRTFLOW_NODE_NOT_READY_AFTER, default 50 s)
	// and NodeDownAfter (--node-down-after, VIRTFLOW_NODE_DOWN_AFTER, default 5 min) are the
	// heartbeat silences after which the node monitor marks a READY node NOT_READY and then
	// DOWN. Agents heartbeat every 10 s, so NOT_READY needs at least a few missed beats.
	NodeNotReadyAfter time.Duration
	NodeDownAfter     time.Duration
}

// NodeMonitor is the node monitor configuration the settings ask for.
func (c Config) NodeMonitor() nodemonitor.Config {
	return nodemonitor.Config{NotReadyAfter: c.NodeNotReadyAfter, DownAfter: c.NodeDownAfter}
}

// Scheduler is the placement configuration the settings ask for.
func (c Config) Scheduler() scheduler.Config {
	sc := scheduler.DefaultConfig()
	if c.Placement == "binpack" {
		sc = scheduler.BinpackConfig()
	}
	for name, w := range c.ScorerWeights {
		if w == 0 {
			delete(sc.Weights, name)
		} else {
			sc.Weights[name] = w
		}
	}
	sc.RequireQuota = c.RequireQuota
	return sc
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
	requireQuota, err := envBool(getenv, "VIRTFLOW_REQUIRE_QUOTA", false)
	if err != nil {
		return c, err
	}
	notReady, err := envDuration(getenv, "VIRTFLOW_NODE_NOT_READY_AFTER", 50*time.Second)
	if err != nil {
		return c, err
	}
	down, err := envDuration(getenv, "VIRTFLOW_NODE_DOWN_AFTER", 5*time.Minute)
	if err != nil {
		return c, err
	}
	weights := envOr(getenv, "VIRTFLOW_SCORER_WEIGHTS", "")
	level := envOr(getenv, "VIRTFLOW_LOG_LEVEL", "info")
	fs.StringVar(&c.Addr, "addr", envOr(getenv, "VIRTFLOW_ADDR", ":8080"), "listen address (VIRTFLOW_ADDR)")
	fs.StringVar(&c.DataDir, "data-dir", envOr(getenv, "VIRTFLOW_DATA_DIR", "./data"), "directory of the embedded SQLite database (VIRTFLOW_DATA_DIR)")
	fs.BoolVar(&c.Demo, "demo", demo, "load the demo datacenter at start; loading twice changes nothing (VIRTFLOW_DEMO)")
	fs.StringVar(&level, "log-level", level, "log level: debug, info, warn, error (VIRTFLOW_LOG_LEVEL)")
	fs.StringVar(&c.LogFormat, "log-format", envOr(getenv, "VIRTFLOW_LOG_FORMAT", "text"), "log format: text or json (VIRTFLOW_LOG_FORMAT)")
	fs.BoolVar(&c.Introspection, "introspection", introspection, "allow GraphQL introspection; switch off in production if wanted (VIRTFLOW_INTROSPECTION)")
	fs.DurationVar(&c.AuditRetention, "audit-retention", retention, "how long to keep audit rows, e.g. 8760h; 0 keeps them forever (VIRTFLOW_AUDIT_RETENTION)")
	fs.StringVar(&c.Placement, "placement", envOr(getenv, "VIRTFLOW_PLACEMENT", "spread"), "VM placement: spread or binpack (VIRTFLOW_PLACEMENT)")
	fs.StringVar(&weights, "scorer-weights", weights, "placement scorer weights, e.g. SpreadAZ=2,LeastAllocated=1; 0 switches one off (VIRTFLOW_SCORER_WEIGHTS)")
	fs.BoolVar(&c.RequireQuota, "require-quota", requireQuota, "refuse placements where the tenant has no quota (VIRTFLOW_REQUIRE_QUOTA)")
	fs.DurationVar(&c.NodeNotReadyAfter, "node-not-ready-after", notReady, "heartbeat silence after which a node is NOT_READY (VIRTFLOW_NODE_NOT_READY_AFTER)")
	fs.DurationVar(&c.NodeDownAfter, "node-down-after", down, "heartbeat silence after which a node is DOWN (VIRTFLOW_NODE_DOWN_AFTER)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.NodeNotReadyAfter <= 0 || c.NodeDownAfter <= c.NodeNotReadyAfter {
		return c, fmt.Errorf("--node-not-ready-after (%s) must be positive and less than --node-down-after (%s)", c.NodeNotReadyAfter, c.NodeDownAfter)
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
	if c.Placement != "spread" && c.Placement != "binpack" {
		return c, fmt.Errorf("placement %q: want spread or binpack", c.Placement)
	}
	if c.ScorerWeights, err = parseWeights(weights); err != nil {
		return c, err
	}
	if err := c.Scheduler().Validate(); err != nil {
		return c, fmt.Errorf("scorer weights: %w", err)
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

// parseWeights reads "Name=2,Other=0.5" into a map; empty gives nil.
func parseWeights(s string) (map[string]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	out := map[string]float64{}
	for _, part := range strings.Split(s, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		w, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if !ok || name == "" || err != nil || w < 0 {
			return nil, fmt.Errorf("scorer weight %q: want Name=weight with a weight of 0 or more", part)
		}
		out[strings.TrimSpace(name)] = w
	}
	return out, nil
}

// envDuration reads a duration such as "50s" or "5m" from the environment.
func envDuration(getenv func(string) string, key string, def time.Duration) (time.Duration, error) {
	v := getenv(key)
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return def, fmt.Errorf("%s=%q: want a duration such as 50s or 5m", key, v)
	}
	return d, nil
}
