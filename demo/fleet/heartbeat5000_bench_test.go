package fleet_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/virtflow/virtflow/agent/hypervisor"
	"github.com/virtflow/virtflow/agent/nodeagent"
	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/demo/fleet"
	"github.com/virtflow/virtflow/domain/identity"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/apitoken"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/rolebinding"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// BenchmarkHeartbeats5000 is issue 6's heartbeat load at its real shape rather than at full
// speed: 5,000 compute nodes, each with its own agent (the nodeagent code, with its own agent
// token), heartbeat every 10 s with a random phase through the real HTTP handler on
// PostgreSQL, an offered load of 500 heartbeats/s, for a fixed window (30 s; the environment
// variable VF_HEARTBEAT5000_WINDOW, a Go duration, changes it). The loops are open: a slow
// acknowledgement does not delay the next heartbeat of the other agents.
//
// It reports heartbeats/s achieved and offered, the p50, p99 and maximum acknowledgement
// latency, the CPU this process used (user+sys seconds per wall second: the handler, the
// 5,000 agents and the HTTP on both sides, but not PostgreSQL, which is another process),
// the errors (0 expected) and the audit rows written during the window (0 expected: a
// routine heartbeat writes only last_heartbeat_at).
//
// The nodes, agent users, AGENT role bindings and tokens are made with bulk inserts, the
// tokens stored hashed as IssueAgentToken stores them; the nodes start READY with the
// capacity and agent version their agents report, so that every heartbeat of the window is
// a routine one. The tokens have never been used, so the first request with each also
// records its last use (identity.LastUsedGranularity, one minute): in a 30 s window a third
// of the heartbeats carry that UPDATE, in the steady state a sixth.
//
// One window is run whatever b.N is; run it with -benchtime=1x. Like every
// benchmark, `go test` without -bench never runs it.
func BenchmarkHeartbeats5000(b *testing.B) {
	const (
		nodes    = 5000
		interval = 10 * time.Second
	)
	window := 30 * time.Second
	if v := os.Getenv("VF_HEARTBEAT5000_WINDOW"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			b.Fatalf("VF_HEARTBEAT5000_WINDOW=%q: want a positive Go duration", v)
		}
		window = d
	}
	env, srv, cl := heartbeatServer(b)
	ctx := gqltest.System()
	setup := time.Now()
	ids, tokens := bulkAgentNodes(b, ctx, env.Client, cl, nodes)
	b.Logf("%d nodes, agent users, role bindings and tokens made in %v", nodes, time.Since(setup).Round(time.Millisecond))

	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 1024, 1024
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	b.Cleanup(tr.CloseIdleConnections)
	agents := make([]*nodeagent.Agent, nodes)
	for i := range agents {
		hv, err := hypervisor.NewSimulated(hypervisor.SimulatedConfig{})
		if err != nil {
			b.Fatal(err)
		}
		agents[i], err = nodeagent.New(nodeagent.Config{APIURL: srv.URL + "/query", Token: tokens[i],
			NodeID: strconv.Itoa(ids[i]), Hypervisor: hv, HTTPClient: hc})
		if err != nil {
			b.Fatal(err)
		}
	}
	audits := func() int { return env.Client.AuditLog.Query().CountX(ctx) } // a fresh database: all are the window's
	auditsBefore := audits()

	var (
		mu      sync.Mutex
		lat     = make([]time.Duration, 0, int(float64(nodes)*window.Seconds()/interval.Seconds())+nodes)
		offered int
		errs    int
		firstEr error
	)
	var before, after syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &before); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	end := start.Add(window)
	var wg sync.WaitGroup
	for i, ag := range agents {
		phase := rand.N(interval)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; ; k++ {
				at := start.Add(phase + time.Duration(k)*interval)
				if !at.Before(end) {
					return
				}
				time.Sleep(time.Until(at))
				mu.Lock()
				offered++
				mu.Unlock()
				t := time.Now()
				err := ag.Heartbeat(context.Background())
				d := time.Since(t)
				mu.Lock()
				if err != nil {
					errs++
					if firstEr == nil {
						firstEr = fmt.Errorf("node %d: %w", ids[i], err)
					}
				} else {
					lat = append(lat, d)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start) // the window and the last heartbeats' acknowledgement
	b.StopTimer()
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &after); err != nil {
		b.Fatal(err)
	}
	cpu := time.Duration(after.Utime.Nano()-before.Utime.Nano()) + time.Duration(after.Stime.Nano()-before.Stime.Nano())
	auditRows := audits() - auditsBefore
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	pct := func(p int) float64 {
		if len(lat) == 0 {
			return 0
		}
		return ms(lat[min(len(lat)*p/100, len(lat)-1)])
	}
	// Logged too, because a failed benchmark prints no metrics.
	b.Logf("window %v: %d heartbeats sent, %d acknowledged in %v (%.1f/s; offered %.0f/s); p50 %.1f ms, p99 %.1f ms, max %.1f ms; CPU %.2f s/s; %d errors; %d audit rows",
		window, offered, len(lat), elapsed.Round(time.Millisecond), float64(len(lat))/elapsed.Seconds(),
		float64(nodes)/interval.Seconds(), pct(50), pct(99), pct(100), cpu.Seconds()/elapsed.Seconds(), errs, auditRows)
	if firstEr != nil {
		b.Errorf("%d of %d heartbeats failed; the first: %v", errs, offered, firstEr)
	}
	if auditRows != 0 {
		b.Errorf("%d audit rows written by routine heartbeats, want 0", auditRows)
	}
	if len(lat) == 0 {
		b.Fatal("no heartbeat acknowledged")
	}
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "heartbeats/s")
	b.ReportMetric(float64(nodes)/interval.Seconds(), "offered_heartbeats/s")
	b.ReportMetric(float64(offered), "heartbeats_sent")
	b.ReportMetric(pct(50), "p50_ms")
	b.ReportMetric(pct(99), "p99_ms")
	b.ReportMetric(pct(100), "max_ms")
	b.ReportMetric(cpu.Seconds()/elapsed.Seconds(), "cpu_s/s")
	b.ReportMetric(float64(errs), "errors")
	b.ReportMetric(float64(auditRows), "audit_rows")
}

// bulkAgentNodes makes n compute nodes in cluster cl, each READY with the capacity and agent
// version a default simulated agent reports, and for each the agent user, AGENT role binding
// on its node and agent token that fleet.IssueAgentToken would make, with bulk inserts. It
// returns the nodes' ids and the tokens' plaintexts (only their hashes are stored).
func bulkAgentNodes(b *testing.B, ctx context.Context, c *ent.Client, cl *ent.Cluster, n int) ([]int, []string) {
	b.Helper()
	const chunk = 500 // rows per INSERT, well under PostgreSQL's 65,535 parameters
	ctx = authz.SystemContext(ctx, "fleet")
	capacity, _ := hypervisor.NewSimulated(hypervisor.SimulatedConfig{})
	hc, err := capacity.Capacity(ctx)
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]int, 0, n)
	tokens := make([]string, 0, n)
	for lo := 0; lo < n; lo += chunk {
		m := min(chunk, n-lo)
		hosts := make([]*ent.HostCreate, m)
		for i := range hosts {
			hosts[i] = c.Host.Create().SetName(uniq("host"))
		}
		hs, err := c.Host.CreateBulk(hosts...).Save(ctx)
		if err != nil {
			b.Fatalf("hosts: %v", err)
		}
		cns := make([]*ent.ComputeNodeCreate, m)
		for i := range cns {
			cns[i] = c.ComputeNode.Create().SetName(uniq("node")).SetHost(hs[i]).SetCluster(cl).
				SetStatus(computenode.StatusReady).SetCPUCapacity(hc.VCPUs).SetMemoryCapacityMB(hc.MemoryMiB).
				SetAgentVersion(nodeagent.Version)
		}
		ns, err := c.ComputeNode.CreateBulk(cns...).Save(ctx)
		if err != nil {
			b.Fatalf("compute nodes: %v", err)
		}
		users := make([]*ent.UserCreate, m)
		for i, node := range ns {
			users[i] = c.User.Create().SetUsername(fleet.AgentUsername(node.ID)).
				SetDisplayName(fmt.Sprintf("node agent of node %d", node.ID))
		}
		us, err := c.User.CreateBulk(users...).Save(ctx)
		if err != nil {
			b.Fatalf("agent users: %v", err)
		}
		bindings := make([]*ent.RoleBindingCreate, m)
		toks := make([]*ent.APITokenCreate, m)
		for i, node := range ns {
			bindings[i] = c.RoleBinding.Create().SetRole(rolebinding.Role(authz.RoleAgent.Enum())).
				SetDomain(authz.NodeDomain(node.ID)).SetUser(us[i]).SetNode(node).SetGrantedBy("fleet")
			plain, hash, prefix := identity.NewToken(apitoken.KindAgent)
			toks[i] = c.APIToken.Create().SetName(fmt.Sprintf("simulated agent of node %d", node.ID)).
				SetTokenHash(hash).SetPrefix(prefix).SetKind(apitoken.KindAgent).SetScope(apitoken.ScopeReadWrite).
				SetOwner(us[i])
			ids = append(ids, node.ID)
			tokens = append(tokens, plain)
		}
		if err := c.RoleBinding.CreateBulk(bindings...).Exec(ctx); err != nil {
			b.Fatalf("role bindings: %v", err)
		}
		if err := c.APIToken.CreateBulk(toks...).Exec(ctx); err != nil {
			b.Fatalf("agent tokens: %v", err)
		}
	}
	return ids, tokens
}
