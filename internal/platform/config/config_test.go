package config_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/virtflow/virtflow/internal/platform/config"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func load(t *testing.T, args []string, vars map[string]string) (config.Config, string, error) {
	t.Helper()
	var stderr bytes.Buffer
	c, err := config.Load("server", args, env(vars), &stderr)
	return c, stderr.String(), err
}

func TestDefaults(t *testing.T) {
	c, _, err := load(t, nil, nil)
	if err != nil {
		t.Fatalf("Load with nothing set: %v", err)
	}
	want := config.Config{
		Addr:          ":8080",
		DataDir:       "./data",
		Demo:          false,
		LogLevel:      slog.LevelInfo,
		LogFormat:     "text",
		Introspection: true,
		ShutdownGrace: 15 * time.Second,
		Placement:     "spread",

		NodeNotReadyAfter:  50 * time.Second,
		NodeDownAfter:      5 * time.Minute,
		GuestReadyDeadline: 10 * time.Minute,
		ImageMaxBytes:      64 << 30,
		DBMaxConns:         16,
		DBStatementCache:   true,

		HTTPReadHeaderTimeout: 10 * time.Second,
		HTTPBodyTimeout:       30 * time.Second,
		HTTPIdleTimeout:       2 * time.Minute,
		UploadIdleTimeout:     time.Minute,
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("defaults = %+v\nwant      %+v", c, want)
	}
	if got := c.ImageDirectory(); got != "data/images" {
		t.Errorf("ImageDirectory() = %q, want data/images under the data directory", got)
	}
	if !c.Embedded() {
		t.Errorf("Embedded() = false with no DATABASE_URL")
	}
}

func TestEnvironment(t *testing.T) {
	tests := []struct {
		name  string
		vars  map[string]string
		check func(config.Config) bool
	}{
		{"VIRTFLOW_ADDR", map[string]string{"VIRTFLOW_ADDR": "127.0.0.1:9090"}, func(c config.Config) bool { return c.Addr == "127.0.0.1:9090" }},
		{"VIRTFLOW_DATA_DIR", map[string]string{"VIRTFLOW_DATA_DIR": "/var/lib/virtflow"}, func(c config.Config) bool { return c.DataDir == "/var/lib/virtflow" }},
		{"VIRTFLOW_PLACEMENT=binpack", map[string]string{"VIRTFLOW_PLACEMENT": "binpack"}, func(c config.Config) bool {
			w := c.Scheduler().Weights
			return c.Placement == "binpack" && w["MostAllocated"] == 1 && w["LeastAllocated"] == 0
		}},
		{"VIRTFLOW_SCORER_WEIGHTS", map[string]string{"VIRTFLOW_SCORER_WEIGHTS": "SpreadAZ=3, NodeLabelSoftAffinity=0"}, func(c config.Config) bool {
			w := c.Scheduler().Weights
			_, soft := w["NodeLabelSoftAffinity"]
			return w["SpreadAZ"] == 3 && !soft && w["LeastAllocated"] == 1
		}},
		{"VIRTFLOW_REQUIRE_QUOTA", map[string]string{"VIRTFLOW_REQUIRE_QUOTA": "true"}, func(c config.Config) bool { return c.Scheduler().RequireQuota }},
		{"server pool by default", nil, func(c config.Config) bool { return c.DBMaxConns == 16 && c.DBStatementCache }},
		{"VIRTFLOW_DB_MAX_CONNS", map[string]string{"VIRTFLOW_DB_MAX_CONNS": "5"}, func(c config.Config) bool { return c.DBMaxConns == 5 }},
		{"VIRTFLOW_DB_STATEMENT_CACHE=false", map[string]string{"VIRTFLOW_DB_STATEMENT_CACHE": "false"}, func(c config.Config) bool { return !c.DBStatementCache }},
		{"VIRTFLOW_REDIS_NAMESPACE", map[string]string{"VIRTFLOW_REDIS_NAMESPACE": "prod-eu"}, func(c config.Config) bool { return c.RedisNamespace == "prod-eu" }},
		{"VIRTFLOW_DEMO=true", map[string]string{"VIRTFLOW_DEMO": "true"}, func(c config.Config) bool { return c.Demo }},
		{"VIRTFLOW_DEMO=1", map[string]string{"VIRTFLOW_DEMO": "1"}, func(c config.Config) bool { return c.Demo }},
		{"VIRTFLOW_DEMO=false", map[string]string{"VIRTFLOW_DEMO": "false"}, func(c config.Config) bool { return !c.Demo }},
		{"VIRTFLOW_INTROSPECTION=false", map[string]string{"VIRTFLOW_INTROSPECTION": "false"}, func(c config.Config) bool { return !c.Introspection }},
		{"VIRTFLOW_LOG_LEVEL", map[string]string{"VIRTFLOW_LOG_LEVEL": "debug"}, func(c config.Config) bool { return c.LogLevel == slog.LevelDebug }},
		{"VIRTFLOW_LOG_LEVEL upper case", map[string]string{"VIRTFLOW_LOG_LEVEL": "WARN"}, func(c config.Config) bool { return c.LogLevel == slog.LevelWarn }},
		{"VIRTFLOW_LOG_FORMAT", map[string]string{"VIRTFLOW_LOG_FORMAT": "json"}, func(c config.Config) bool { return c.LogFormat == "json" }},
		{"VIRTFLOW_ADMIN_TOKEN", map[string]string{"VIRTFLOW_ADMIN_TOKEN": "s3cret"}, func(c config.Config) bool { return c.AdminToken == "s3cret" }},
		{"DATABASE_URL postgres://", map[string]string{"DATABASE_URL": "postgres://u@db:5432/vf?sslmode=disable"},
			func(c config.Config) bool {
				return c.DatabaseURL == "postgres://u@db:5432/vf?sslmode=disable" && !c.Embedded()
			}},
		{"DATABASE_URL postgresql://", map[string]string{"DATABASE_URL": "postgresql://u@db/vf"}, func(c config.Config) bool { return !c.Embedded() }},
		{"REDIS_URL", map[string]string{"REDIS_URL": "redis://cache:6379/1"}, func(c config.Config) bool { return c.RedisURL == "redis://cache:6379/1" && c.Embedded() }},
		{"VIRTFLOW_NODE_NOT_READY_AFTER and _DOWN_AFTER", map[string]string{"VIRTFLOW_NODE_NOT_READY_AFTER": "30s", "VIRTFLOW_NODE_DOWN_AFTER": "2m"},
			func(c config.Config) bool {
				m := c.NodeMonitor()
				return m.NotReadyAfter == 30*time.Second && m.DownAfter == 2*time.Minute
			}},
		{"VIRTFLOW_PPROF_ADDR", map[string]string{"VIRTFLOW_PPROF_ADDR": "127.0.0.1:6060"}, func(c config.Config) bool { return c.PprofAddr == "127.0.0.1:6060" }},
		{"VIRTFLOW_PPROF_ADDR localhost", map[string]string{"VIRTFLOW_PPROF_ADDR": "[::1]:6060"}, func(c config.Config) bool { return c.PprofAddr == "[::1]:6060" }},
		{"empty values mean unset", map[string]string{"VIRTFLOW_ADDR": "", "VIRTFLOW_DEMO": ""}, func(c config.Config) bool { return c.Addr == ":8080" && !c.Demo }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, err := load(t, nil, tt.vars)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if !tt.check(c) {
				t.Errorf("with %v got %+v", tt.vars, c)
			}
		})
	}
}

func TestFlagsWinOverEnvironment(t *testing.T) {
	vars := map[string]string{
		"VIRTFLOW_ADDR":          ":7000",
		"VIRTFLOW_DATA_DIR":      "/env/dir",
		"VIRTFLOW_DEMO":          "true",
		"VIRTFLOW_LOG_LEVEL":     "error",
		"VIRTFLOW_LOG_FORMAT":    "json",
		"VIRTFLOW_INTROSPECTION": "false",
	}
	c, _, err := load(t, []string{"--addr", "127.0.0.1:0", "-data-dir=/flag/dir", "--demo=false",
		"--log-level", "debug", "--log-format=text", "--introspection"}, vars)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if c.Addr != "127.0.0.1:0" || c.DataDir != "/flag/dir" || c.Demo || c.LogLevel != slog.LevelDebug ||
		c.LogFormat != "text" || !c.Introspection {
		t.Errorf("flags did not win: %+v", c)
	}
	// A flag left out keeps the environment's value.
	c, _, err = load(t, []string{"--addr", ":1"}, vars)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if c.DataDir != "/env/dir" || !c.Demo || c.LogLevel != slog.LevelError {
		t.Errorf("environment lost when only --addr was given: %+v", c)
	}
	// A bare --demo switches it on over VIRTFLOW_DEMO=false.
	c, _, err = load(t, []string{"--demo"}, map[string]string{"VIRTFLOW_DEMO": "false"})
	if err != nil || !c.Demo {
		t.Errorf("--demo over VIRTFLOW_DEMO=false: %+v, %v", c, err)
	}
}

func TestBadValues(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		vars    map[string]string
		wantErr []string // all must appear in the error
	}{
		{"bad bool in VIRTFLOW_DEMO", nil, map[string]string{"VIRTFLOW_DEMO": "maybe"}, []string{"VIRTFLOW_DEMO", "maybe", "true or false"}},
		{"bad bool in VIRTFLOW_INTROSPECTION", nil, map[string]string{"VIRTFLOW_INTROSPECTION": "nope"}, []string{"VIRTFLOW_INTROSPECTION", "nope"}},
		{"bad bool flag", []string{"--demo=perhaps"}, nil, []string{"demo"}},
		{"unknown placement", []string{"--placement=random"}, nil, []string{"random", "spread or binpack"}},
		{"unknown scorer", nil, map[string]string{"VIRTFLOW_SCORER_WEIGHTS": "Fastest=2"}, []string{"Fastest"}},
		{"bad scorer weight", []string{"--scorer-weights=SpreadAZ=-1"}, nil, []string{"SpreadAZ=-1"}},
		{"bad log level env", nil, map[string]string{"VIRTFLOW_LOG_LEVEL": "verbose"}, []string{"verbose", "debug, info, warn or error"}},
		{"bad log level flag", []string{"--log-level", "loud"}, nil, []string{"loud"}},
		{"bad log format", []string{"--log-format", "xml"}, nil, []string{"xml", "text or json"}},
		{"bad pool size", nil, map[string]string{"VIRTFLOW_DB_MAX_CONNS": "many"}, []string{"VIRTFLOW_DB_MAX_CONNS", "number"}},
		{"zero pool size", []string{"--db-max-conns", "0"}, nil, []string{"db-max-conns", "at least 1"}},
		{"bad redis namespace", nil, map[string]string{"VIRTFLOW_REDIS_NAMESPACE": "a:b"}, []string{"redis-namespace", "a:b"}},
		{"DATABASE_URL not postgres", nil, map[string]string{"DATABASE_URL": "mysql://root@db/vf"}, []string{"DATABASE_URL", "postgres://"}},
		{"DATABASE_URL a bare host", nil, map[string]string{"DATABASE_URL": "db.internal:5432"}, []string{"DATABASE_URL"}},
		{"bad node threshold", nil, map[string]string{"VIRTFLOW_NODE_NOT_READY_AFTER": "soon"}, []string{"VIRTFLOW_NODE_NOT_READY_AFTER", "soon"}},
		{"DOWN before NOT_READY", []string{"--node-not-ready-after=10m"}, nil, []string{"node-not-ready-after", "less than"}},
		{"zero NOT_READY", []string{"--node-not-ready-after=0s"}, nil, []string{"must be positive"}},
		{"pprof on a public address", []string{"--pprof-addr", "0.0.0.0:6060"}, nil, []string{"pprof-addr", "loopback"}},
		{"pprof without a port", nil, map[string]string{"VIRTFLOW_PPROF_ADDR": "127.0.0.1"}, []string{"pprof-addr", "loopback"}},
		{"unknown flag", []string{"--port", "80"}, nil, []string{"port"}},
		{"stray argument", []string{"serve"}, nil, []string{"unexpected arguments", "serve"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, err := load(t, tt.args, tt.vars)
			if err == nil {
				t.Fatalf("Load(%v, %v) succeeded; want an error", tt.args, tt.vars)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) && !strings.Contains(stderr, want) {
					t.Errorf("error %q (stderr %q) does not mention %q", err, stderr, want)
				}
			}
		})
	}
}

func TestDatabaseURLErrorHidesPassword(t *testing.T) {
	_, _, err := load(t, nil, map[string]string{"DATABASE_URL": "mysql://root:hunter2@db/vf"})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error %v must exist and must not repeat the password", err)
	}
}

func TestHelp(t *testing.T) {
	_, stderr, err := load(t, []string{"-h"}, nil)
	if !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h returned %v, want flag.ErrHelp", err)
	}
	for _, want := range []string{"-addr", "VIRTFLOW_ADDR", "-data-dir", "VIRTFLOW_DATA_DIR", "-demo", "VIRTFLOW_DEMO", "-log-level"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("usage lacks %q:\n%s", want, stderr)
		}
	}
}

func TestLogger(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		c, _, err := load(t, []string{"--log-format", format, "--log-level", "warn"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		log := c.Logger(&buf)
		log.Info("hidden")
		log.Warn("shown", "k", "v")
		out := buf.String()
		if strings.Contains(out, "hidden") || !strings.Contains(out, "shown") {
			t.Errorf("%s logger at warn wrote %q", format, out)
		}
		if format == "json" {
			var m map[string]any
			if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &m); err != nil || m["msg"] != "shown" || m["k"] != "v" {
				t.Errorf("json logger wrote %q (%v)", out, err)
			}
		} else if !strings.Contains(out, "msg=shown") {
			t.Errorf("text logger wrote %q", out)
		}
	}
}

func TestImageSettings(t *testing.T) {
	c, _, err := load(t, []string{"--image-dir", "/srv/images", "--image-max-bytes", "1048576"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.ImageDirectory() != "/srv/images" || c.ImageMaxBytes != 1<<20 {
		t.Fatalf("image settings: dir %q max %d", c.ImageDirectory(), c.ImageMaxBytes)
	}
	if _, _, err := load(t, nil, map[string]string{"VIRTFLOW_IMAGE_MAX_BYTES": "lots"}); err == nil {
		t.Fatal("a non-numeric VIRTFLOW_IMAGE_MAX_BYTES was accepted")
	}
	if _, _, err := load(t, []string{"--image-max-bytes", "0"}, nil); err == nil {
		t.Fatal("--image-max-bytes 0 was accepted")
	}
}

// TestEgressAndSecretSettings: the egress allow list and the secret keys are read from the
// environment (the allow list also from its flag) and refused when malformed.
func TestEgressAndSecretSettings(t *testing.T) {
	key := strings.Repeat("ab", 32)
	c, _, err := load(t, []string{"--egress-allow", "10.0.0.0/8,images.internal"},
		map[string]string{"VIRTFLOW_SECRET_KEY": key, "VIRTFLOW_SECRET_KEYS_OLD": " " + key + " ,"})
	if err != nil || c.EgressAllow != "10.0.0.0/8,images.internal" || c.SecretKey != key || len(c.OldSecretKeys) != 1 {
		t.Fatalf("Load: %+v, %v", c, err)
	}
	if c.SecretKeyFile() != "data/secret.key" {
		t.Errorf("SecretKeyFile %q", c.SecretKeyFile())
	}
	for name, vars := range map[string]map[string]string{
		"allow list": {"VIRTFLOW_EGRESS_ALLOW": "10.0.0.0/33"},
		"key":        {"VIRTFLOW_SECRET_KEY": "too-short"},
		"old key":    {"VIRTFLOW_SECRET_KEYS_OLD": "nope"},
	} {
		if _, _, err := load(t, nil, vars); err == nil {
			t.Errorf("bad %s accepted", name)
		}
	}
}
