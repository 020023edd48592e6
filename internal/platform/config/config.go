// Package config reads VirtFlow's settings from flags and environment variables. Flags win
// over the environment; with nothing set the server runs self-contained (SQLite under
// ./data, an in-process Redis, the worker in the same process) on :8080.
package config

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/virtflow/virtflow/controllers/nodemonitor"
	"github.com/virtflow/virtflow/domain/egress"
	"github.com/virtflow/virtflow/domain/guest"
	"github.com/virtflow/virtflow/domain/scheduler"
	"github.com/virtflow/virtflow/internal/platform/secrets"
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
	// GuestReadyDeadline (--guest-ready-deadline, VIRTFLOW_GUEST_READY_DEADLINE, default
	// 10 min) is how long a VM's guest may stay BOOTING after its domain started before it
	// is UNREACHABLE, with a warning event (package guest).
	GuestReadyDeadline time.Duration
	// ImageDir (--image-dir, VIRTFLOW_IMAGE_DIR) is where the server and the workers keep
	// image bytes; <data-dir>/images when empty. Every server and worker of an installation
	// must see the same directory.
	ImageDir string
	// ImageMaxBytes (--image-max-bytes, VIRTFLOW_IMAGE_MAX_BYTES) bounds one image, uploaded
	// or fetched: 64 GiB by default.
	ImageMaxBytes int64
	// DBMaxConns (--db-max-conns, VIRTFLOW_DB_MAX_CONNS) is the most PostgreSQL connections
	// the process opens: by default 16 for a server and 8 for a worker, so that two of each
	// stay at half of PostgreSQL's default max_connections of 100.
	DBMaxConns int
	// DBStatementCache (--db-statement-cache, VIRTFLOW_DB_STATEMENT_CACHE, default true) keeps
	// each connection's statements prepared (named, per connection); switch it off behind a
	// PgBouncer in transaction mode older than 1.21 (see the README's "Scaling out").
	DBStatementCache bool
	// RedisNamespace (--redis-namespace, VIRTFLOW_REDIS_NAMESPACE) sets apart the Redis
	// channels and keys of one deployment from another's on the same Redis server; empty: named
	// after the Redis database number of REDIS_URL (see infra.Redis.Namespace).
	RedisNamespace string
	// Version (--version) asks the command to print its version and exit.
	Version bool
	// TrustedProxies (--trusted-proxies, VIRTFLOW_TRUSTED_PROXIES, e.g. "10.0.0.0/8,192.0.2.7")
	// are the load balancers whose X-Forwarded-For is believed, so that login rate limits,
	// token CIDRs and audit rows see the client's address.
	TrustedProxies string
	// EgressAllow (--egress-allow, VIRTFLOW_EGRESS_ALLOW, e.g. "10.0.0.0/8,images.internal")
	// lists the CIDRs and host names besides public addresses that image sources and hooks
	// may connect to (package egress); empty allows public addresses only.
	EgressAllow string
	// SecretKey (VIRTFLOW_SECRET_KEY, 32 bytes as 64 hex digits or base64; no flag, so that
	// it is not in the process list) seals the secrets stored in the database (package
	// internal/secrets). Empty: the key kept in SecretKeyFile, made on first start.
	SecretKey string
	// OldSecretKeys (VIRTFLOW_SECRET_KEYS_OLD, comma-separated) still open what they sealed,
	// after a rotation; values are re-sealed under SecretKey at startup.
	OldSecretKeys []string
	// HTTPReadHeaderTimeout (--http-read-header-timeout, VIRTFLOW_HTTP_READ_HEADER_TIMEOUT,
	// 10 s), HTTPBodyTimeout (--http-body-timeout, VIRTFLOW_HTTP_BODY_TIMEOUT, 30 s: the time
	// a whole request body may take, image uploads aside) and HTTPIdleTimeout
	// (--http-idle-timeout, VIRTFLOW_HTTP_IDLE_TIMEOUT, 2 min: a keep-alive connection's wait
	// for its next request) bound slow clients.
	HTTPReadHeaderTimeout time.Duration
	HTTPBodyTimeout       time.Duration
	HTTPIdleTimeout       time.Duration
	// UploadIdleTimeout (--upload-idle-timeout, VIRTFLOW_UPLOAD_IDLE_TIMEOUT, 60 s) cuts an
	// image upload that sends no byte for that long, however long the whole upload takes;
	// its upload session lapses after the same time, and another client may start over.
	UploadIdleTimeout time.Duration
	// MetricsAddr (--metrics-addr, VIRTFLOW_METRICS_ADDR) serves /metrics on an address of
	// its own, and only there. Without it /metrics on --addr needs a token.
	MetricsAddr string
	// MetricsToken (VIRTFLOW_METRICS_TOKEN) is a bearer token that reads /metrics (wherever
	// it is served; an operator's or admin's API token also does on --addr). Set, it is
	// also required on --metrics-addr and on the worker's address.
	MetricsToken string
	// PprofAddr (--pprof-addr, VIRTFLOW_PPROF_ADDR, e.g. 127.0.0.1:6060) serves Go's
	// runtime profiles (net/http/pprof, /debug/pprof/) on a loopback address of their own;
	// empty, the default, serves none. Any address that is not loopback is refused: the
	// profiles show the process's internals, so only someone on the machine reads them.
	PprofAddr string
	// GSLBPowerDNSURL (VIRTFLOW_GSLB_PDNS_URL, e.g. http://10.0.0.53:8081), GSLBPowerDNSKey
	// (VIRTFLOW_GSLB_PDNS_KEY, its api-key) and GSLBZone (VIRTFLOW_GSLB_ZONE, e.g.
	// gslb.example.com) name the PowerDNS server and the zone in it that answer for global
	// services in GSLB mode (package gslb); unset, those global services read NOT_SERVED.
	GSLBPowerDNSURL, GSLBPowerDNSKey, GSLBZone string
	// PrometheusURL (VIRTFLOW_PROMETHEUS_URL, e.g. http://10.0.0.9:9090) is the Prometheus
	// that scrapes the agents (deploy/prometheus); the dashboard's usage graphs query it
	// through the server (package usagegraph), through the egress policy: allow its
	// address in VIRTFLOW_EGRESS_ALLOW. Unset, graphs answer UNAVAILABLE.
	PrometheusURL string
}

// SecretKeyFile is where the secret key is kept when SecretKey is empty:
// <DataDir>/secret.key (mode 0600), or, for a configuration built without Load and
// without DataDir (tests), a file in the temporary directory named for the database, so
// that the server and workers of one database share it.
func (c Config) SecretKeyFile() string {
	if c.DataDir != "" {
		return filepath.Join(c.DataDir, "secret.key")
	}
	sum := sha256.Sum256([]byte(c.DatabaseURL))
	return filepath.Join(os.TempDir(), "virtflow-secret-"+hex.EncodeToString(sum[:8])+".key")
}

// ImageDirectory is the directory of image bytes: ImageDir, or <DataDir>/images, or, for a
// configuration built without Load and without either (tests), a directory in the
// temporary directory named for the database, so that the server and workers of one
// database share it and those of another do not.
func (c Config) ImageDirectory() string {
	switch {
	case c.ImageDir != "":
		return c.ImageDir
	case c.DataDir != "":
		return filepath.Join(c.DataDir, "images")
	}
	sum := sha256.Sum256([]byte(c.DatabaseURL))
	return filepath.Join(os.TempDir(), "virtflow-images-"+hex.EncodeToString(sum[:8]))
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
		SecretKey:     getenv("VIRTFLOW_SECRET_KEY"),
	}
	for _, k := range strings.Split(getenv("VIRTFLOW_SECRET_KEYS_OLD"), ",") {
		if k = strings.TrimSpace(k); k != "" {
			c.OldSecretKeys = append(c.OldSecretKeys, k)
		}
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
	maxImage, err := strconv.ParseInt(envOr(getenv, "VIRTFLOW_IMAGE_MAX_BYTES", strconv.FormatInt(64<<30, 10)), 10, 64)
	if err != nil {
		return c, fmt.Errorf("VIRTFLOW_IMAGE_MAX_BYTES: want a number of bytes: %w", err)
	}
	maxConns := 16
	if name == "worker" {
		maxConns = 8
	}
	if v := getenv("VIRTFLOW_DB_MAX_CONNS"); v != "" {
		if maxConns, err = strconv.Atoi(v); err != nil {
			return c, fmt.Errorf("VIRTFLOW_DB_MAX_CONNS: want a number of connections: %w", err)
		}
	}
	stmtCache, err := envBool(getenv, "VIRTFLOW_DB_STATEMENT_CACHE", true)
	if err != nil {
		return c, err
	}
	timeouts := map[string]*time.Duration{}
	for _, t := range []struct {
		flag, env string
		def       time.Duration
		to        *time.Duration
		help      string
	}{
		{"http-read-header-timeout", "VIRTFLOW_HTTP_READ_HEADER_TIMEOUT", 10 * time.Second, &c.HTTPReadHeaderTimeout, "time a client may take to send a request's headers"},
		{"http-body-timeout", "VIRTFLOW_HTTP_BODY_TIMEOUT", 30 * time.Second, &c.HTTPBodyTimeout, "time a client may take to send a whole request body (image uploads aside)"},
		{"http-idle-timeout", "VIRTFLOW_HTTP_IDLE_TIMEOUT", 2 * time.Minute, &c.HTTPIdleTimeout, "time a keep-alive connection waits for its next request"},
		{"upload-idle-timeout", "VIRTFLOW_UPLOAD_IDLE_TIMEOUT", time.Minute, &c.UploadIdleTimeout, "an image upload sending no byte for this long is cut and its session lapses"},
	} {
		d, err := envDuration(getenv, t.env, t.def)
		if err != nil {
			return c, err
		}
		fs.DurationVar(t.to, t.flag, d, t.help+" ("+t.env+")")
		timeouts["--"+t.flag] = t.to
	}
	c.MetricsToken = getenv("VIRTFLOW_METRICS_TOKEN")
	c.PrometheusURL = getenv("VIRTFLOW_PROMETHEUS_URL")
	c.GSLBPowerDNSURL, c.GSLBPowerDNSKey, c.GSLBZone = getenv("VIRTFLOW_GSLB_PDNS_URL"), getenv("VIRTFLOW_GSLB_PDNS_KEY"), getenv("VIRTFLOW_GSLB_ZONE")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", getenv("VIRTFLOW_METRICS_ADDR"), "serve /metrics only on this address (VIRTFLOW_METRICS_ADDR); without it /metrics on --addr needs VIRTFLOW_METRICS_TOKEN or an operator's token")
	fs.StringVar(&c.PprofAddr, "pprof-addr", getenv("VIRTFLOW_PPROF_ADDR"), "serve Go's runtime profiles (/debug/pprof/) on this loopback address, e.g. 127.0.0.1:6060 (VIRTFLOW_PPROF_ADDR); off when empty")
	weights := envOr(getenv, "VIRTFLOW_SCORER_WEIGHTS", "")
	level := envOr(getenv, "VIRTFLOW_LOG_LEVEL", "info")
	addr, addrHelp := ":8080", "listen address (VIRTFLOW_ADDR)"
	if name == "worker" {
		addr, addrHelp = ":8081", "listen address of /metrics, /healthz, /readyz and /version (VIRTFLOW_ADDR)"
	}
	fs.StringVar(&c.Addr, "addr", envOr(getenv, "VIRTFLOW_ADDR", addr), addrHelp)
	c.DataDir = envOr(getenv, "VIRTFLOW_DATA_DIR", "./data")
	c.Demo, c.Introspection = demo, introspection
	// The worker has no embedded database, demo or GraphQL: it lists only its own flags.
	if name != "worker" {
		fs.StringVar(&c.DataDir, "data-dir", c.DataDir, "directory of the embedded SQLite database (VIRTFLOW_DATA_DIR)")
		fs.BoolVar(&c.Demo, "demo", demo, "load the demo datacenter at start; loading twice changes nothing (VIRTFLOW_DEMO)")
		fs.BoolVar(&c.Introspection, "introspection", introspection, "allow GraphQL introspection; switch off in production if wanted (VIRTFLOW_INTROSPECTION)")
	}
	fs.BoolVar(&c.Version, "version", false, "print the version and exit")
	if name != "worker" {
		fs.StringVar(&c.TrustedProxies, "trusted-proxies", getenv("VIRTFLOW_TRUSTED_PROXIES"), "addresses and CIDRs of load balancers whose X-Forwarded-For is trusted, comma-separated (VIRTFLOW_TRUSTED_PROXIES)")
	}
	fs.StringVar(&level, "log-level", level, "log level: debug, info, warn, error (VIRTFLOW_LOG_LEVEL)")
	fs.StringVar(&c.LogFormat, "log-format", envOr(getenv, "VIRTFLOW_LOG_FORMAT", "text"), "log format: text or json (VIRTFLOW_LOG_FORMAT)")
	fs.DurationVar(&c.AuditRetention, "audit-retention", retention, "how long to keep audit rows, e.g. 8760h; 0 keeps them forever (VIRTFLOW_AUDIT_RETENTION)")
	fs.StringVar(&c.Placement, "placement", envOr(getenv, "VIRTFLOW_PLACEMENT", "spread"), "VM placement: spread or binpack (VIRTFLOW_PLACEMENT)")
	fs.StringVar(&weights, "scorer-weights", weights, "placement scorer weights, e.g. SpreadAZ=2,LeastAllocated=1; 0 switches one off (VIRTFLOW_SCORER_WEIGHTS)")
	fs.BoolVar(&c.RequireQuota, "require-quota", requireQuota, "refuse placements where the tenant has no quota (VIRTFLOW_REQUIRE_QUOTA)")
	fs.DurationVar(&c.NodeNotReadyAfter, "node-not-ready-after", notReady, "heartbeat silence after which a node is NOT_READY (VIRTFLOW_NODE_NOT_READY_AFTER)")
	fs.DurationVar(&c.NodeDownAfter, "node-down-after", down, "heartbeat silence after which a node is DOWN (VIRTFLOW_NODE_DOWN_AFTER)")
	guestDeadline, err := envDuration(getenv, "VIRTFLOW_GUEST_READY_DEADLINE", guest.DefaultDeadline)
	if err != nil {
		return c, err
	}
	fs.DurationVar(&c.GuestReadyDeadline, "guest-ready-deadline", guestDeadline, "time a VM's guest may take to report ready after its domain started before it is UNREACHABLE (VIRTFLOW_GUEST_READY_DEADLINE)")
	fs.StringVar(&c.ImageDir, "image-dir", getenv("VIRTFLOW_IMAGE_DIR"), "directory of image bytes, shared by servers and workers; <data-dir>/images when empty (VIRTFLOW_IMAGE_DIR)")
	fs.Int64Var(&c.ImageMaxBytes, "image-max-bytes", maxImage, "largest image accepted, uploaded or fetched, in bytes (VIRTFLOW_IMAGE_MAX_BYTES)")
	fs.IntVar(&c.DBMaxConns, "db-max-conns", maxConns, "most PostgreSQL connections this process opens (VIRTFLOW_DB_MAX_CONNS)")
	fs.BoolVar(&c.DBStatementCache, "db-statement-cache", stmtCache, "keep statements prepared per PostgreSQL connection; false behind PgBouncer in transaction mode before 1.21 (VIRTFLOW_DB_STATEMENT_CACHE)")
	fs.StringVar(&c.RedisNamespace, "redis-namespace", getenv("VIRTFLOW_REDIS_NAMESPACE"), "name setting this deployment's Redis channels and keys apart; default from REDIS_URL's database (VIRTFLOW_REDIS_NAMESPACE)")
	fs.StringVar(&c.EgressAllow, "egress-allow", getenv("VIRTFLOW_EGRESS_ALLOW"), "CIDRs and host names beside public addresses that image sources and hooks may reach, comma-separated (VIRTFLOW_EGRESS_ALLOW)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.DBMaxConns < 1 {
		return c, fmt.Errorf("--db-max-conns %d: want at least 1", c.DBMaxConns)
	}
	if c.RedisNamespace != "" && !validNamespace(c.RedisNamespace) {
		return c, fmt.Errorf("--redis-namespace %q: want letters, digits, '-' and '_' only", c.RedisNamespace)
	}
	if c.NodeNotReadyAfter <= 0 || c.NodeDownAfter <= c.NodeNotReadyAfter {
		return c, fmt.Errorf("--node-not-ready-after (%s) must be positive and less than --node-down-after (%s)", c.NodeNotReadyAfter, c.NodeDownAfter)
	}
	for name, d := range timeouts {
		if *d <= 0 {
			return c, fmt.Errorf("%s %s: want a positive duration", name, *d)
		}
	}
	if c.GuestReadyDeadline <= 0 {
		return c, fmt.Errorf("--guest-ready-deadline %s: want a positive duration", c.GuestReadyDeadline)
	}
	if c.ImageMaxBytes <= 0 {
		return c, fmt.Errorf("--image-max-bytes %d: want a positive number of bytes", c.ImageMaxBytes)
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
	if _, err := egress.Parse(c.EgressAllow); err != nil {
		return c, err
	}
	if c.SecretKey != "" {
		if _, err := secrets.ParseKey(c.SecretKey); err != nil {
			return c, fmt.Errorf("VIRTFLOW_SECRET_KEY: %w", err)
		}
	}
	for _, k := range c.OldSecretKeys {
		if _, err := secrets.ParseKey(k); err != nil {
			return c, fmt.Errorf("VIRTFLOW_SECRET_KEYS_OLD: %w", err)
		}
	}
	if c.PprofAddr != "" && !loopbackAddr(c.PprofAddr) {
		return c, fmt.Errorf("--pprof-addr %q: want a loopback address such as 127.0.0.1:6060", c.PprofAddr)
	}
	if c.DatabaseURL != "" && !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://") {
		return c, fmt.Errorf("DATABASE_URL must be a postgres:// URL")
	}
	return c, nil
}

// loopbackAddr reports whether addr is host:port with a loopback IP or "localhost" as host.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
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

// validNamespace reports whether ns is a Redis namespace: ASCII letters, digits, '-' and '_'.
func validNamespace(ns string) bool {
	for _, r := range ns {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return len(ns) <= 64
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
