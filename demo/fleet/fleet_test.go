package fleet_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/virtflow/virtflow/agent/hypervisor"
	"github.com/virtflow/virtflow/agent/nodeagent"
	"github.com/virtflow/virtflow/demo/fleet"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/apitoken"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/user"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/poll"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

var seq atomic.Int64

func uniq(p string) string { return fmt.Sprintf("%s-%d", p, seq.Add(1)) }

// TestFleetSmoke: a fleet of simulated agents against the real API handler heartbeats its
// nodes to READY with their recorded capacity and realizes RUNNING assignments on the
// simulated hypervisors, reporting each one.
func TestFleetSmoke(t *testing.T) { testFleet(t, 0) }

// TestFleetWithFailures: the same with a fifth of the hypervisor operations failing; the
// agents retry (idempotent operations) until every assignment is applied.
func TestFleetWithFailures(t *testing.T) { testFleet(t, 0.2) }

func testFleet(t *testing.T, failureRate float64) {
	env := gqltest.Postgres(t, testdb.DSN(t))
	srv := httptest.NewServer(env.Handler)
	t.Cleanup(srv.Close)
	ctx, c := gqltest.System(), env.Client

	region := c.Region.Create().SetName(uniq("region")).SaveX(ctx)
	dc := c.Datacenter.Create().SetName(uniq("dc")).SetRegion(region).SaveX(ctx)
	cl := c.Cluster.Create().SetName(uniq("cluster")).SetRegion(region).SetDatacenter(dc).SaveX(ctx)
	tenant := c.Tenant.Create().SetName(uniq("tenant")).SaveX(ctx)
	flavor := c.Flavor.Create().SetName(uniq("flavor")).SetVcpus(2).SetMemoryMB(1024).SaveX(ctx)
	var nodes []*ent.ComputeNode
	var assignments []*ent.Assignment
	for range 3 {
		host := c.Host.Create().SetName(uniq("host")).SaveX(ctx)
		n := c.ComputeNode.Create().SetName(uniq("node")).SetHost(host).SetCluster(cl).
			SetCPUCapacity(24).SetMemoryCapacityMB(65536).SetDiskCapacityGB(500).SaveX(ctx)
		nodes = append(nodes, n)
		for range 2 {
			vm := c.VirtualMachine.Create().SetName(uniq("vm")).SetTenant(tenant).SetRegion(region).SetFlavor(flavor).
				SetCluster(cl).SetNode(n).SaveX(ctx)
			assignments = append(assignments, c.Assignment.Create().SetNode(n).SetVirtualMachine(vm).SaveX(ctx))
		}
	}

	fleetNodes, err := fleet.Provision(ctx, c, env.Identity, ids(nodes))
	if err != nil {
		t.Fatal(err)
	}
	if len(fleetNodes) != len(nodes) {
		t.Fatalf("provisioned %d nodes, want %d", len(fleetNodes), len(nodes))
	}
	var mu sync.Mutex
	applied := map[string]bool{}
	f, err := fleet.New(fleet.Config{
		APIURL: srv.URL + "/query", Nodes: fleetNodes,
		Delays:            hypervisor.OperationDelays{Define: time.Millisecond, Start: 5 * time.Millisecond},
		HeartbeatInterval: 50 * time.Millisecond, ResyncInterval: 50 * time.Millisecond,
		FailureRate: failureRate, Seed: 42, RetryDelay: time.Millisecond,
		OnReport: func(r nodeagent.AssignmentReport, err error) {
			mu.Lock()
			defer mu.Unlock()
			if r.Status == "APPLIED" && r.ObservedState == "running" {
				applied[r.ID] = true
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(runCtx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("fleet: %v", err)
		}
	}()

	poll.Until(t, 30*time.Second, func() error {
		mu.Lock()
		n := len(applied)
		mu.Unlock()
		ready := c.ComputeNode.Query().Where(computenode.IDIn(ids(nodes)...), computenode.StatusEQ(computenode.StatusReady)).CountX(ctx)
		if n == len(assignments) && ready == len(nodes) {
			return nil
		}
		return fmt.Errorf("%d of %d assignments applied, %d of %d nodes READY", n, len(assignments), ready, len(nodes))
	})
	for _, n := range nodes {
		got := c.ComputeNode.GetX(ctx, n.ID)
		if got.CPUCapacity != 24 || got.MemoryCapacityMB != 65536 || got.LastHeartbeatAt == nil {
			t.Errorf("node %d after heartbeats: cpu %d, memory %d, heartbeat %v", n.ID, got.CPUCapacity, got.MemoryCapacityMB, got.LastHeartbeatAt)
		}
		doms, err := f.Hypervisor(n.ID).List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(doms) != 2 {
			t.Errorf("node %d: %d domains, want 2", n.ID, len(doms))
		}
		for _, d := range doms {
			if d.State != hypervisor.StateRunning {
				t.Errorf("node %d: domain %s is %s", n.ID, d.Name, d.State)
			}
		}
	}
}

// TestIssueAgentTokenRevokesOlder: issuing a node's agent token again keeps one agent user
// and binding and revokes the earlier token.
func TestIssueAgentTokenRevokesOlder(t *testing.T) {
	env := gqltest.Postgres(t, testdb.DSN(t))
	ctx, c := gqltest.System(), env.Client
	region := c.Region.Create().SetName(uniq("region")).SaveX(ctx)
	dc := c.Datacenter.Create().SetName(uniq("dc")).SetRegion(region).SaveX(ctx)
	cl := c.Cluster.Create().SetName(uniq("cluster")).SetRegion(region).SetDatacenter(dc).SaveX(ctx)
	host := c.Host.Create().SetName(uniq("host")).SaveX(ctx)
	n := c.ComputeNode.Create().SetName(uniq("node")).SetHost(host).SetCluster(cl).SaveX(ctx)

	first, err := fleet.IssueAgentToken(ctx, c, env.Identity, n.ID)
	if err != nil {
		t.Fatal(err)
	}
	second, err := fleet.IssueAgentToken(ctx, c, env.Identity, n.ID)
	if err != nil {
		t.Fatal(err)
	}
	q := `{ computeNodes { totalCount } }`
	env.As(first).Do(t, q, nil).ExpectError(t, "UNAUTHENTICATED", "")
	var out struct{ ComputeNodes struct{ TotalCount int } }
	env.As(second).MustDo(t, q, nil, &out)
	if out.ComputeNodes.TotalCount != 1 {
		t.Fatalf("the agent sees %d nodes, want its own only", out.ComputeNodes.TotalCount)
	}
	u := c.User.Query().Where(user.Username(fleet.AgentUsername(n.ID))).OnlyX(ctx)
	if k := c.APIToken.Query().Where(apitoken.HasOwnerWith(user.ID(u.ID)), apitoken.KindEQ(apitoken.KindAgent)).CountX(ctx); k != 2 {
		t.Fatalf("%d agent tokens, want 2 (one revoked)", k)
	}
	if b := c.User.QueryRoleBindings(u).CountX(ctx); b != 1 {
		t.Fatalf("%d role bindings, want 1", b)
	}
}

func ids(ns []*ent.ComputeNode) []int {
	out := make([]int, len(ns))
	for i, n := range ns {
		out[i] = n.ID
	}
	return out
}
