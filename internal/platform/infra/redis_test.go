package infra_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/testkit/poll"
)

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// start runs a daemon for the test's lifetime.
func start(t *testing.T, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
}

// TestRedisSentinel opens REDIS_URL naming a Sentinel master (Debian's redis-sentinel
// watching a throw-away redis-server) and uses it for pub/sub clients and the task queue.
func TestRedisSentinel(t *testing.T) {
	server, err1 := exec.LookPath("redis-server")
	sentinel, err2 := exec.LookPath("redis-sentinel")
	if err1 != nil || err2 != nil {
		t.Skip("redis-server or redis-sentinel not installed (Debian packages redis-server, redis-sentinel; .ci/run installs them)")
	}
	dir := t.TempDir()
	master, sport := freePort(t), freePort(t)
	start(t, server, "--port", fmt.Sprint(master), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir)
	conf := filepath.Join(dir, "sentinel.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nsentinel monitor vfmaster 127.0.0.1 %d 1\n"+
		"sentinel down-after-milliseconds vfmaster 1000\n", sport, dir, master)), 0o600); err != nil {
		t.Fatal(err)
	}
	start(t, sentinel, conf)
	url := fmt.Sprintf("redis://127.0.0.1:%d/0?master_name=vfmaster", sport)
	ctx := context.Background()
	var r *infra.Redis
	poll.Until(t, 15*time.Second, func() error {
		var err error
		r, err = infra.OpenRedis(ctx, url)
		return err
	})
	defer r.Close()
	if r.Embedded() {
		t.Fatal("a Sentinel URL started the embedded Redis")
	}
	if err := r.Client.Set(ctx, "vf:sentinel", "ok", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Asynq.(asynq.RedisFailoverClientOpt); !ok {
		t.Fatalf("task queue options %T, want a failover client", r.Asynq)
	}
	qc := asynq.NewClient(r.Asynq)
	defer qc.Close()
	if _, err := qc.Enqueue(asynq.NewTask("vm:create", nil)); err != nil {
		t.Fatalf("enqueue through Sentinel: %v", err)
	}
	ins := asynq.NewInspector(r.Asynq)
	defer ins.Close()
	info, err := ins.GetQueueInfo("default")
	if err != nil || info.Pending != 1 {
		t.Fatalf("queue through Sentinel: %+v, %v", info, err)
	}
}
