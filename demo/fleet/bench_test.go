package fleet_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/virtflow/virtflow/agent/hypervisor"
	"github.com/virtflow/virtflow/agent/nodeagent"
	"github.com/virtflow/virtflow/demo/fleet"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// BenchmarkHeartbeats measures heartbeat ingestion: 200 simulated agents, each with its own
// agent token, send reportNodeStatus through the real HTTP handler on PostgreSQL, 32 at a
// time. It reports heartbeats/s (5,000 agents every 10 s need 500/s) and the p50 and p99
// acknowledgement latency.
func BenchmarkHeartbeats(b *testing.B) {
	env, srv, cl := heartbeatServer(b)
	ctx, c := gqltest.System(), env.Client
	const nodes, concurrency = 200, 32
	agents := make([]*nodeagent.Agent, nodes)
	for i := range agents {
		host := c.Host.Create().SetName(uniq("host")).SaveX(ctx)
		n := c.ComputeNode.Create().SetName(uniq("node")).SetHost(host).SetCluster(cl).SaveX(ctx)
		tok, err := fleet.IssueAgentToken(ctx, c, env.Identity, n.ID)
		if err != nil {
			b.Fatal(err)
		}
		hv, _ := hypervisor.NewSimulated(hypervisor.SimulatedConfig{})
		agents[i], err = nodeagent.New(nodeagent.Config{APIURL: srv.URL + "/query", Token: tok, NodeID: strconv.Itoa(n.ID), Hypervisor: hv})
		if err != nil {
			b.Fatal(err)
		}
	}

	lat := make([]time.Duration, b.N)
	var next sync.Mutex
	i := 0
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				next.Lock()
				k := i
				i++
				next.Unlock()
				if k >= b.N {
					return
				}
				t := time.Now()
				if err := agents[k%nodes].Heartbeat(context.Background()); err != nil {
					b.Error(err)
					return
				}
				lat[k] = time.Since(t)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "heartbeats/s")
	b.ReportMetric(float64(lat[b.N/2].Microseconds())/1000, "p50_ms")
	b.ReportMetric(float64(lat[b.N*99/100].Microseconds())/1000, "p99_ms")
}

// heartbeatServer opens a fresh PostgreSQL database behind the real API handler, served over
// HTTP, with one cluster to put the heartbeating nodes in.
func heartbeatServer(b *testing.B) (*gqltest.Env, *httptest.Server, *ent.Cluster) {
	b.Helper()
	env := gqltest.Postgres(b, testdb.DSN(b))
	srv := httptest.NewServer(env.Handler)
	b.Cleanup(srv.Close)
	ctx, c := gqltest.System(), env.Client
	region := c.Region.Create().SetName(uniq("region")).SaveX(ctx)
	dc := c.Datacenter.Create().SetName(uniq("dc")).SetRegion(region).SaveX(ctx)
	cl := c.Cluster.Create().SetName(uniq("cluster")).SetRegion(region).SetDatacenter(dc).SaveX(ctx)
	return env, srv, cl
}
