package app_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/internal/app"
	"github.com/virtflow/virtflow/internal/platform/config"
	"github.com/virtflow/virtflow/internal/testkit/poll"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// sentinelMaster is the master name the test's Sentinels watch.
const sentinelMaster = "virtflow"

// TestSentinelFailoverLosesNoCreate runs a server (with --demo's simulated fleet) and a
// standalone worker on PostgreSQL and a Sentinel-managed Redis (a master, a replica, three
// Sentinels: Debian's redis-server and redis-sentinel), creates VMs through the API, forces a
// failover (SENTINEL FAILOVER) halfway, and checks that every create the API accepted
// reaches ACTIVE: the outbox restores what the promoted replica had not received.
func TestSentinelFailoverLosesNoCreate(t *testing.T) {
	for _, bin := range []string{"redis-server", "redis-sentinel"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s not installed (Debian packages redis-server and redis-sentinel; .ci/run installs them)", bin)
		}
	}
	began := time.Now()
	dir := t.TempDir()
	master, replica := freePort(t), freePort(t)
	redisServer(t, dir, "master", master)
	redisServer(t, dir, "replica", replica, "--replicaof", "127.0.0.1", strconv.Itoa(master))
	var sentinels []string
	for i := range 3 {
		p := freePort(t)
		conf := filepath.Join(dir, fmt.Sprintf("sentinel%d.conf", i))
		text := fmt.Sprintf("port %d\nbind 127.0.0.1\nprotected-mode no\ndaemonize no\ndir %s\n"+
			"sentinel monitor %s 127.0.0.1 %d 2\nsentinel down-after-milliseconds %[3]s 1000\n"+
			"sentinel failover-timeout %[3]s 10000\nsentinel parallel-syncs %[3]s 1\n", p, dir, sentinelMaster, master)
		// Sentinels rewrite their configuration: each needs a file of its own.
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		daemon(t, filepath.Join(dir, fmt.Sprintf("sentinel%d.log", i)), "redis-sentinel", conf)
		waitPort(t, p)
		sentinels = append(sentinels, fmt.Sprintf("127.0.0.1:%d", p))
	}
	sentinel := redis.NewSentinelClient(&redis.Options{Addr: sentinels[0]})
	defer sentinel.Close()
	// The Sentinels must know the replica before they can promote it.
	poll.Until(t, 30*time.Second, func() error {
		rs, err := sentinel.Replicas(context.Background(), sentinelMaster).Result()
		if err != nil || len(rs) == 0 {
			return fmt.Errorf("sentinel knows no replica yet: %v", err)
		}
		return nil
	})

	ctx, cancel := context.WithTimeout(authz.SystemContext(context.Background(), "test"), 5*time.Minute)
	defer cancel()
	dsn, drop, err := testdb.Create(ctx)
	if err != nil {
		testdb.Unavailable(t, err)
	}
	t.Cleanup(drop)
	redisURL := fmt.Sprintf("redis://%s/0?master_name=%s&addr=%s&addr=%s", sentinels[0], sentinelMaster, sentinels[1], sentinels[2])
	vars := map[string]string{"DATABASE_URL": dsn, "REDIS_URL": redisURL}
	srv := start(t, loadConfig(t, []string{"--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--demo"}, vars))

	wcfg, err := config.Load("worker", []string{"--addr", "127.0.0.1:0"}, func(k string) string { return vars[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithCancel(ctx)
	wdone := make(chan error, 1)
	go func() {
		wdone <- app.RunWorkerWith(wctx, wcfg, slog.New(slog.NewTextHandler(io.Discard, nil)), app.Options{})
	}()
	t.Cleanup(func() { wcancel(); <-wdone })

	var ref struct {
		VirtualMachines struct {
			Edges []struct {
				Node struct{ Tenant, Region struct{ ID string } }
			}
		}
		Flavors struct {
			Edges []struct{ Node struct{ ID string } }
		}
	}
	srv.mustQuery(t, `{ virtualMachines(first: 1) { edges { node { tenant { id } region { id } } } }
	  flavors(first: 1, orderBy: {field: VCPUS}) { edges { node { id } } } }`, nil, &ref)
	vm := ref.VirtualMachines.Edges[0].Node
	const creates = 24
	accepted := 0
	failedOver := time.Time{}
	for i := range creates {
		if i == creates/2 {
			// Refused (NOGOODSLAVE) until the replica's link to the master is up: retry.
			poll.Until(t, 30*time.Second, func() error { return sentinel.Failover(context.Background(), sentinelMaster).Err() })
			failedOver = time.Now()
		}
		g := srv.query(t, `mutation($in: CreateVirtualMachineInput!) { createVirtualMachine(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"name": fmt.Sprintf("sentinel-vm-%02d", i), "tenantID": vm.Tenant.ID,
				"regionID": vm.Region.ID, "flavorID": ref.Flavors.Edges[0].Node.ID}})
		if len(g.Errors) == 0 {
			accepted++
		} else {
			t.Logf("create %d refused: %v", i, g.Errors)
		}
	}
	if accepted < creates/2 {
		t.Fatalf("only %d of %d creates accepted", accepted, creates)
	}
	poll.Until(t, 30*time.Second, func() error {
		addr, err := sentinel.GetMasterAddrByName(context.Background(), sentinelMaster).Result()
		if err != nil || len(addr) != 2 || addr[1] != strconv.Itoa(replica) {
			return fmt.Errorf("master is %v (%v), want the former replica :%d", addr, err, replica)
		}
		return nil
	})
	var active time.Duration
	poll.Until(t, 3*time.Minute, func() error {
		var out struct {
			VirtualMachines struct {
				Edges []struct{ Node struct{ Name, Status string } }
			}
		}
		srv.mustQuery(t, `{ virtualMachines(first: 100, where: {nameHasPrefix: "sentinel-vm-"}) { edges { node { name status } } } }`, nil, &out)
		var waiting []string
		for _, e := range out.VirtualMachines.Edges {
			if e.Node.Status != "ACTIVE" {
				waiting = append(waiting, e.Node.Name+"="+e.Node.Status)
			}
		}
		if len(out.VirtualMachines.Edges) != accepted || len(waiting) > 0 {
			return fmt.Errorf("%d VMs of %d accepted, not ACTIVE: %s", len(out.VirtualMachines.Edges), accepted, strings.Join(waiting, " "))
		}
		active = time.Since(failedOver)
		return nil
	})
	t.Logf("%d of %d creates accepted, all ACTIVE %v after the failover; test took %v", accepted, creates,
		active.Round(100*time.Millisecond), time.Since(began).Round(100*time.Millisecond))
}

// freePort returns a TCP port of 127.0.0.1 free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// redisServer starts a redis-server without persistence on port, with extra arguments.
func redisServer(t *testing.T, dir, name string, port int, extra ...string) {
	t.Helper()
	args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--dbfilename", name + ".rdb"}, extra...)
	daemon(t, filepath.Join(dir, name+".log"), "redis-server", args...)
	waitPort(t, port)
}

// daemon runs bin until the test ends, its output in logPath.
func daemon(t *testing.T, logPath, bin string, args ...string) {
	t.Helper()
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
	})
}

// waitPort waits until something listens on port.
func waitPort(t *testing.T, port int) {
	t.Helper()
	poll.Until(t, 10*time.Second, func() error {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err != nil {
			return err
		}
		return c.Close()
	})
}
