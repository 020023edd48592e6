package nodeagent_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/virtflow/virtflow/agent/hypervisor"
	"github.com/virtflow/virtflow/agent/nodeagent"
	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/demo/fleet"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/auditlog"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/maintenance"
	"github.com/virtflow/virtflow/ent/quota"
	"github.com/virtflow/virtflow/ent/tenant"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/internal/app"
	"github.com/virtflow/virtflow/internal/platform/config"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
	"github.com/virtflow/virtflow/internal/testkit/testlog"
)

// fleetStack is a server and a standalone worker (app.RunServer, app.RunWorker) on
// PostgreSQL and Redis with a site of several nodes, each node with a libvirt of its own:
// libvirtd's test driver opened on a node file of its own (test:///<dir>/node-N.xml), which,
// unlike test:///default, gives every connection private domains, as separate hosts have.
type fleetStack struct {
	env    *gqltest.Env
	site   *placementtest.Site
	flavor *ent.Flavor
	hvs    []*hypervisor.Libvirt
	base   string
	runCtx context.Context
	log    *slog.Logger
}

func startFleet(t *testing.T, nodes int) *fleetStack {
	t.Helper()
	return startFleetWith(t, placementtest.Spec{Racks: 1, HostsPerRack: nodes, PowerZones: 1,
		NetworkZones: 1, CPU: 16, MemoryMB: 65536, DiskGB: 500, Cores: 8}, nil)
}

// startFleetWith is startFleet with the site spec and, when tweak is set, changes to the
// server's and worker's configuration.
func startFleetWith(t *testing.T, spec placementtest.Spec, tweak func(*config.Config)) *fleetStack {
	t.Helper()
	nodes := spec.Racks * spec.HostsPerRack
	socket := os.Getenv("VIRTFLOW_TEST_LIBVIRT_SOCKET")
	if socket == "" {
		socket = hypervisor.DefaultSocket
		if _, err := os.Stat(socket); err != nil {
			t.Skipf("no libvirtd: VIRTFLOW_TEST_LIBVIRT_SOCKET is unset and %s does not exist", socket)
		}
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var hvs []*hypervisor.Libvirt
	for i := range nodes {
		file := filepath.Join(dir, fmt.Sprintf("node-%d.xml", i))
		if err := os.WriteFile(file, []byte("<node/>\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		h, err := hypervisor.NewLibvirt(ctx, hypervisor.LibvirtConfig{Socket: socket, URI: "test://" + file, PollInterval: 10 * time.Millisecond})
		cancel()
		if err != nil {
			t.Fatalf("connect to libvirt test://%s: %v", file, err)
		}
		t.Cleanup(func() { _ = h.Close() })
		hvs = append(hvs, h)
	}

	dsn := testdb.DSN(t)
	env := gqltest.Postgres(t, dsn)
	ctx := gqltest.System()
	site, err := placementtest.Build(ctx, env.Client, spec)
	if err != nil {
		t.Fatal(err)
	}
	fl, err := site.Flavor(ctx, 1, 128, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	// The node monitor (the drain's driver) ticks every second with a 10 s threshold.
	cfg := config.Config{Addr: "127.0.0.1:0", DatabaseURL: dsn, AdminToken: gqltest.AdminToken, ShutdownGrace: 5 * time.Second,
		RedisURL:          testdb.PrivateRedis(t), // a Redis of its own, as startStack's
		NodeNotReadyAfter: 10 * time.Second, NodeDownAfter: 20 * time.Second}
	if tweak != nil {
		tweak(&cfg)
	}
	log := testlog.OnFailure(t)
	runCtx, stop := context.WithCancel(authz.SystemContext(context.Background(), "e2e"))
	ready, serverDone, workerDone := make(chan string, 1), make(chan error, 1), make(chan error, 1)
	go func() { serverDone <- app.RunServer(runCtx, cfg, log, func(a string) { ready <- a }) }()
	go func() { workerDone <- app.RunWorker(runCtx, cfg, log) }()
	t.Cleanup(func() { stop(); <-serverDone; <-workerDone })
	st := &fleetStack{env: env, site: site, flavor: fl, hvs: hvs, runCtx: runCtx, log: log}
	select {
	case a := <-ready:
		st.base = "http://" + a + "/query"
	case err := <-serverDone:
		t.Fatalf("server: %v", err)
	}
	return st
}

// startAgent runs node i's agent until the returned stop is called (which waits for it).
func (st *fleetStack) startAgent(t *testing.T, i int) (stop func()) {
	t.Helper()
	tok, err := fleet.IssueAgentToken(gqltest.System(), st.env.Client, st.env.Identity, st.site.Nodes[i].ID)
	if err != nil {
		t.Fatal(err)
	}
	ag, err := nodeagent.New(nodeagent.Config{APIURL: st.base, Token: tok, Hypervisor: st.hvs[i], Log: st.log,
		HeartbeatInterval: time.Second, ResyncInterval: 2 * time.Second, RetryDelay: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(st.runCtx)
	done := make(chan struct{})
	go func() { defer close(done); _ = ag.Run(ctx) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// domains counts, per VM id, the domains defined on every node's libvirt now.
func (st *fleetStack) domains(t *testing.T) (map[int64]int, map[int64]int, error) {
	count, running := map[int64]int{}, map[int64]int{}
	for _, h := range st.hvs {
		ds, err := h.List(context.Background())
		if err != nil {
			return nil, nil, err
		}
		for _, d := range ds {
			count[d.VMID]++
			if d.State == hypervisor.StateRunning {
				running[d.VMID]++
			}
		}
	}
	return count, running, nil
}

// TestDrainEndToEnd is issue 16's drain on real parts: PostgreSQL, Redis, the server and a
// standalone worker, and the real agent of each of two nodes on a libvirt of its own. Ten
// VMs run on node 0, whose tenant is at its quota. drainNode moves them cold to node 1 while
// a sampler lists the domains of both nodes' libvirt continuously: never two domains of
// one VM at once. Node 0's agent is killed right after drainNode and started again. The
// drain ends DRAINED with exactly one running domain per VM, all on node 1; a second
// drainNode answered with the same maintenance record while it ran; the quota usage did not
// change. Then node 1's agent goes silent until the node is DOWN: its VMs read UNKNOWN; an
// operator deletes one with force, which frees its capacity at once; when the agent
// returns the others read ACTIVE again and the deleted VM's leftover domain is removed.
func TestDrainEndToEnd(t *testing.T) {
	const vms = 10
	st := startFleet(t, 2)
	ctx, c := gqltest.System(), st.env.Client
	n0, n1 := st.site.Nodes[0].ID, st.site.Nodes[1].ID
	stop0 := st.startAgent(t, 0)
	stop1 := st.startAgent(t, 1)
	api := &nodeagent.Client{URL: st.base, Token: gqltest.AdminToken}

	// Ten VMs on node 0 (node 1 cordoned meanwhile), the tenant's quota then full.
	c.ComputeNode.UpdateOneID(n1).SetSchedulable(false).ExecX(ctx)
	var ids []int
	for i := range vms {
		var out struct{ CreateVirtualMachine struct{ ID string } }
		if err := api.Do(ctx, `mutation($in: CreateVirtualMachineInput!) { createVirtualMachine(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"name": fmt.Sprintf("drain-%d", i), "tenantID": gqltest.ID(st.site.Tenant),
				"regionID": gqltest.ID(st.site.Region), "flavorID": gqltest.ID(st.flavor.ID)}}, &out); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, mustInt(t, out.CreateVirtualMachine.ID))
	}
	eventuallyWithin(t, 90*time.Second, "10 VMs ACTIVE on node 0", func() bool {
		return c.VirtualMachine.Query().Where(virtualmachine.IDIn(ids...), virtualmachine.StatusEQ(virtualmachine.StatusActive),
			virtualmachine.HasNodeWith(computenode.ID(n0))).CountX(ctx) == vms
	})
	c.ComputeNode.UpdateOneID(n1).SetSchedulable(true).ExecX(ctx)
	q := c.Quota.Create().SetTenantID(st.site.Tenant).SetHostGroupID(st.site.HostGroup).SetVcpus(vms).
		SetUsedVcpus(vms).SetUsedMemoryMB(vms * st.flavor.MemoryMB).SaveX(ctx)

	// The sampler: every domain of every node, continuously, until the drain is over.
	sampleCtx, stopSampling := context.WithCancel(context.Background())
	var samples, worst int
	var worstAt string
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for sampleCtx.Err() == nil {
			count, _, err := st.domains(t)
			if err != nil {
				continue
			}
			samples++
			for id, n := range count {
				if n > worst {
					worst, worstAt = n, fmt.Sprintf("VM %d had %d domains at sample %d", id, n, samples)
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()

	drainCall := `mutation($id: ID!) { drainNode(id: $id) { maintenance { id } moving { id } unmovable { reason } } }`
	type report struct {
		DrainNode struct {
			Maintenance struct{ ID string }
			Moving      []struct{ ID string }
			Unmovable   []struct{ Reason string }
		}
	}
	began := time.Now()
	var first report
	if err := api.Do(ctx, drainCall, map[string]any{"id": gqltest.ID(n0)}, &first); err != nil {
		t.Fatal(err)
	}
	// Node 0's agent dies in the middle of the drain and comes back.
	stop0()
	if len(first.DrainNode.Moving) != vms || len(first.DrainNode.Unmovable) != 0 {
		t.Fatalf("drainNode: %d moving, unmovable %+v; want %d and none (the quota is full)", len(first.DrainNode.Moving), first.DrainNode.Unmovable, vms)
	}
	var second report
	if err := api.Do(ctx, drainCall, map[string]any{"id": gqltest.ID(n0)}, &second); err != nil {
		t.Fatalf("second drainNode: %v", err)
	}
	if second.DrainNode.Maintenance.ID != first.DrainNode.Maintenance.ID {
		t.Errorf("second drainNode: maintenance %s, want the running drain's %s", second.DrainNode.Maintenance.ID, first.DrainNode.Maintenance.ID)
	}
	time.Sleep(2 * time.Second)
	st.startAgent(t, 0)

	eventuallyWithin(t, 120*time.Second, "node 0 DRAINED and every VM running on node 1", func() bool {
		n := c.ComputeNode.GetX(ctx, n0)
		if n.DrainState == nil || *n.DrainState != computenode.DrainStateDrained {
			return false
		}
		return c.Assignment.Query().Where(assignment.HasNodeWith(computenode.ID(n1)), assignment.StatusEQ(assignment.StatusApplied),
			assignment.DesiredStateEQ(assignment.DesiredStateRunning), assignment.ObservedState("running")).CountX(ctx) == vms
	})
	took := time.Since(began)
	stopSampling()
	<-sampled
	t.Logf("drain of %d VMs: DRAINED with every VM running on the new node after %s (%d domain samples)", vms, took.Round(time.Millisecond), samples)
	if worst > 1 {
		t.Errorf("a VM ran twice during the drain: %s", worstAt)
	}
	if samples < 10 {
		t.Errorf("only %d samples of the domains were taken", samples)
	}
	count, running, err := st.domains(t)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if count[int64(id)] != 1 || running[int64(id)] != 1 {
			t.Errorf("VM %d: %d domains, %d running; want exactly one running", id, count[int64(id)], running[int64(id)])
		}
	}
	if ds, _ := st.hvs[0].List(ctx); len(ds) != 0 {
		t.Errorf("node 0 still has %d domains after its drain", len(ds))
	}
	if n := c.Maintenance.Query().Where(maintenance.HasNodesWith(computenode.ID(n0))).CountX(ctx); n != 1 {
		t.Errorf("%d maintenance records for node 0, want 1", n)
	}
	if m := c.Maintenance.GetX(ctx, mustInt(t, first.DrainNode.Maintenance.ID)); m.Status != maintenance.StatusClosed {
		t.Errorf("maintenance %s, want CLOSED", m.Status)
	}
	if got := c.Quota.Query().Where(quota.ID(q.ID), quota.HasTenantWith(tenant.ID(st.site.Tenant))).OnlyX(ctx).UsedVcpus; got != vms {
		t.Errorf("quota used %d vCPUs after the drain, want %d", got, vms)
	}

	// Node 1 goes silent until it is DOWN: its VMs read UNKNOWN.
	stop1()
	c.ComputeNode.UpdateOneID(n1).SetLastHeartbeatAt(time.Now().Add(-time.Minute)).ExecX(ctx)
	eventuallyWithin(t, 30*time.Second, "node 1 DOWN and its VMs UNKNOWN", func() bool {
		return c.VirtualMachine.Query().Where(virtualmachine.IDIn(ids...), virtualmachine.StatusEQ(virtualmachine.StatusUnknown)).CountX(ctx) == vms
	})
	var read struct{ Node struct{ Status string } }
	if err := api.Do(ctx, `query($id: ID!) { node(id: $id) { ... on VirtualMachine { status } } }`, map[string]any{"id": gqltest.ID(ids[0])}, &read); err != nil {
		t.Fatal(err)
	}
	if read.Node.Status != "UNKNOWN" {
		t.Errorf("a VM of the DOWN node reads %s through the API, want UNKNOWN", read.Node.Status)
	}
	// A drain of the DOWN node needs force.
	if err := api.Do(ctx, drainCall, map[string]any{"id": gqltest.ID(n1)}, nil); err == nil || !strings.Contains(err.Error(), "force") {
		t.Errorf("drainNode of a DOWN node without force: %v, want a VALIDATION error naming force", err)
	}
	// An operator deletes one with force: gone at once, its capacity freed.
	before := c.ComputeNode.GetX(ctx, n1).CPUAllocated
	if err := api.Do(ctx, `mutation($id: ID!) { deleteVirtualMachine(id: $id, force: true) }`, map[string]any{"id": gqltest.ID(ids[0])}, nil); err != nil {
		t.Fatal(err)
	}
	if c.VirtualMachine.Query().Where(virtualmachine.ID(ids[0])).ExistX(ctx) {
		t.Fatalf("VM %d still exists after a forced delete", ids[0])
	}
	if after := c.ComputeNode.GetX(ctx, n1).CPUAllocated; after != before-st.flavor.Vcpus {
		t.Errorf("node 1 cpuAllocated %d after the forced delete, want %d", after, before-st.flavor.Vcpus)
	}
	if n := c.AuditLog.Query().Where(auditlog.Action("deleteVirtualMachine(force)"), auditlog.ObjectID(ids[0])).CountX(ctx); n != 1 {
		t.Errorf("%d audit rows for the forced delete, want 1 with action deleteVirtualMachine(force)", n)
	}
	// The agent returns: the VMs read ACTIVE again and the deleted VM's domain goes.
	st.startAgent(t, 1)
	eventuallyWithin(t, 60*time.Second, "the VMs ACTIVE again", func() bool {
		return c.VirtualMachine.Query().Where(virtualmachine.IDIn(ids[1:]...), virtualmachine.StatusEQ(virtualmachine.StatusActive)).CountX(ctx) == vms-1
	})
	eventuallyWithin(t, 60*time.Second, "the force-deleted VM's leftover domain removed", func() bool {
		_, err := st.hvs[1].State(ctx, hypervisor.DomainName(int64(ids[0])))
		return errors.Is(err, hypervisor.ErrNotFound)
	})
	eventuallyWithin(t, 30*time.Second, "the leftover's assignment removed", func() bool {
		return c.Assignment.Query().Where(assignment.VMID(ids[0])).CountX(ctx) == 0
	})
}

func mustInt(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
