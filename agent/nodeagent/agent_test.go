package nodeagent_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/lib/pq"

	"github.com/virtflow/virtflow/agent/bgp/bgptest"
	"github.com/virtflow/virtflow/agent/hypervisor"
	"github.com/virtflow/virtflow/agent/nodeagent"
	"github.com/virtflow/virtflow/demo/fleet"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/port"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/poll"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

func TestMain(m *testing.M) {
	bgptest.Helper() // a child running a BGP speaker in a namespace (routed_e2e_test.go)
	testdb.Main(m)
}

var seq atomic.Int64

func uniq(p string) string { return fmt.Sprintf("%s-%d-%d", p, os.Getpid(), seq.Add(1)) }

// world is a server over a fresh database with one compute node and its agent token.
type world struct {
	env   *gqltest.Env
	url   string
	node  *ent.ComputeNode
	token string
	vmFix func(t *testing.T, desired assignment.DesiredState) (*ent.VirtualMachine, *ent.Assignment)
}

func newWorld(t *testing.T) *world {
	t.Helper()
	dsn := testdb.DSN(t)
	env := gqltest.Postgres(t, dsn)
	srv := httptest.NewServer(env.Handler)
	t.Cleanup(srv.Close)
	ctx := gqltest.System()
	c := env.Client

	// libvirt's test driver is one namespace shared by every test package using it, and VM
	// ids start at the same value in every fresh database: start this database's VM ids at
	// a random point of their range so that domain names vf-<vm id> do not collide.
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`SELECT setval(pg_get_serial_sequence('virtual_machines', 'id'),
		(SELECT COALESCE(MAX(id), (SELECT last_value FROM `+"virtual_machines_id_seq"+`)) FROM virtual_machines) + $1)`,
		rand.IntN(1<<30)); err != nil {
		t.Fatalf("move the VM id sequence: %v", err)
	}

	region := c.Region.Create().SetName(uniq("region")).SaveX(ctx)
	dc := c.Datacenter.Create().SetName(uniq("dc")).SetRegion(region).SaveX(ctx)
	cl := c.Cluster.Create().SetName(uniq("cluster")).SetRegion(region).SetDatacenter(dc).SaveX(ctx)
	host := c.Host.Create().SetName(uniq("host")).SaveX(ctx)
	node := c.ComputeNode.Create().SetName(uniq("node")).SetHost(host).SetCluster(cl).SaveX(ctx)
	tenant := c.Tenant.Create().SetName(uniq("tenant")).SaveX(ctx)
	flavor := c.Flavor.Create().SetName(uniq("flavor")).SetVcpus(1).SetMemoryMB(128).SaveX(ctx)
	tok, err := fleet.IssueAgentToken(ctx, c, env.Identity, node.ID)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{env: env, url: srv.URL + "/query", node: node, token: tok}
	w.vmFix = func(t *testing.T, desired assignment.DesiredState) (*ent.VirtualMachine, *ent.Assignment) {
		t.Helper()
		vm := c.VirtualMachine.Create().SetName(uniq("vm")).SetTenant(tenant).SetRegion(region).SetFlavor(flavor).
			SetCluster(cl).SetNode(node).SaveX(ctx)
		c.Port.Create().SetName("eth0").SetKind(port.KindVirtual).SetMAC(fmt.Sprintf("52:54:00:%02x:%02x:%02x", rand.IntN(256), rand.IntN(256), rand.IntN(256))).
			SetVirtualMachine(vm).ExecX(ctx)
		a := c.Assignment.Create().SetNode(node).SetVirtualMachine(vm).SetDesiredState(desired).SaveX(ctx)
		return vm, a
	}
	return w
}

// libvirtTestDriver connects to libvirt's test driver through the real daemon.
func libvirtTestDriver(t *testing.T) *hypervisor.Libvirt {
	t.Helper()
	socket := os.Getenv("VIRTFLOW_TEST_LIBVIRT_SOCKET")
	if socket == "" {
		socket = hypervisor.DefaultSocket
		if _, err := os.Stat(socket); err != nil {
			t.Skipf("no libvirtd: VIRTFLOW_TEST_LIBVIRT_SOCKET is unset and %s does not exist", socket)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h, err := hypervisor.NewLibvirt(ctx, hypervisor.LibvirtConfig{Socket: socket, URI: "test:///default", PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatalf("connect to libvirt: %v", err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// counting counts the calls that change domains.
type counting struct {
	hypervisor.Hypervisor
	defines, starts, reboots, undefines atomic.Int32
}

func (c *counting) Reboot(ctx context.Context, name string) error {
	c.reboots.Add(1)
	return c.Hypervisor.Reboot(ctx, name)
}

func (c *counting) Define(ctx context.Context, s hypervisor.DomainSpec) error {
	c.defines.Add(1)
	return c.Hypervisor.Define(ctx, s)
}

func (c *counting) Start(ctx context.Context, name string) error {
	c.starts.Add(1)
	return c.Hypervisor.Start(ctx, name)
}

func (c *counting) Undefine(ctx context.Context, name string) error {
	c.undefines.Add(1)
	return c.Hypervisor.Undefine(ctx, name)
}

// reports collects the assignment reports an agent sends.
type reports struct {
	mu   sync.Mutex
	list []report
}

type report struct {
	nodeagent.AssignmentReport
	err error
}

func (r *reports) add(a nodeagent.AssignmentReport, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, report{a, err})
}

// last returns the last report for assignment id.
func (r *reports) last(id int) (report, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.list) - 1; i >= 0; i-- {
		if r.list[i].ID == strconv.Itoa(id) {
			return r.list[i], true
		}
	}
	return report{}, false
}

// eventually polls cond until it holds, failing after 20 s (poll.Until).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	eventuallyWithin(t, 20*time.Second, what, cond)
}

// eventuallyWithin polls cond until it holds, failing the test after d (poll.Until).
func eventuallyWithin(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	poll.Until(t, d, func() error {
		if cond() {
			return nil
		}
		return fmt.Errorf("waiting for %s", what)
	})
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestAgentRealizesAssignmentsOnLibvirt: against the real API handler and libvirtd's test
// driver, the agent discovers its node from its token, heartbeats (the node becomes READY),
// defines and starts the domain of a RUNNING assignment and reports APPLIED/running; a
// restarted agent rebuilds its view from libvirt and redoes nothing; ABSENT undefines the
// domain and reports absent.
func TestAgentRealizesAssignmentsOnLibvirt(t *testing.T) {
	w := newWorld(t)
	hv := libvirtTestDriver(t)
	ctx := gqltest.System()
	vm, a := w.vmFix(t, assignment.DesiredStateRunning)
	name := hypervisor.DomainName(int64(vm.ID))
	t.Cleanup(func() { _ = hv.Undefine(context.Background(), name) })

	var got reports
	cfg := nodeagent.Config{APIURL: w.url, Token: w.token, Hypervisor: hv, Log: quiet(), OnReport: got.add,
		HeartbeatInterval: 100 * time.Millisecond, ResyncInterval: 100 * time.Millisecond}
	ag, err := nodeagent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ag.Run(runCtx) }()

	eventually(t, "the domain running", func() bool {
		st, err := hv.State(context.Background(), name)
		return err == nil && st == hypervisor.StateRunning
	})
	eventually(t, "an APPLIED report", func() bool { r, ok := got.last(a.ID); return ok && r.Status == "APPLIED" })
	r, _ := got.last(a.ID)
	if r.ObservedState != "running" || r.Generation != a.Generation {
		t.Errorf("report: %+v", r)
	}
	if r.err != nil {
		// reportAssignmentStatus belongs to the provisioning worker's part of issue 6.
		t.Logf("the API refused the report (reportAssignmentStatus not implemented yet?): %v", r.err)
	} else {
		eventually(t, "the assignment APPLIED in the API", func() bool {
			x := w.env.Client.Assignment.GetX(ctx, a.ID)
			return x.Status == assignment.StatusApplied
		})
	}
	eventually(t, "the node READY", func() bool {
		n := w.env.Client.ComputeNode.GetX(ctx, w.node.ID)
		return n.Status == "READY" && n.LastHeartbeatAt != nil && n.CPUCapacity > 0
	})
	if ag.NodeID() != strconv.Itoa(w.node.ID) {
		t.Errorf("discovered node %s, want %d", ag.NodeID(), w.node.ID)
	}
	doms, err := hv.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range doms {
		if d.Name == name {
			n++
			if d.Generation != a.Generation {
				t.Errorf("domain generation %d, want %d", d.Generation, a.Generation)
			}
		}
	}
	if n != 1 {
		t.Fatalf("%d domains named %s", n, name)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}

	// A restarted agent (nothing kept but libvirt and the API) does no work twice.
	cnt := &counting{Hypervisor: hv}
	cfg.Hypervisor, cfg.NodeID = cnt, strconv.Itoa(w.node.ID)
	ag2, err := nodeagent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ag2.Resync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d, s := cnt.defines.Load(), cnt.starts.Load(); d != 0 || s != 0 {
		t.Fatalf("restarted agent redid work: %d defines, %d starts", d, s)
	}

	// ABSENT: the domain goes.
	w.env.Client.Assignment.UpdateOneID(a.ID).SetDesiredState(assignment.DesiredStateAbsent).
		SetGeneration(a.Generation + 1).ExecX(ctx)
	if err := ag2.Resync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := hv.State(context.Background(), name); !errors.Is(err, hypervisor.ErrNotFound) {
		t.Fatalf("domain still there after ABSENT: %v", err)
	}
	r, _ = got.last(a.ID)
	if r.Status != "APPLIED" || r.ObservedState != "absent" || r.Generation != a.Generation+1 {
		t.Fatalf("report after ABSENT: %+v", r)
	}
	if cnt.undefines.Load() != 1 {
		t.Fatalf("undefines: %d", cnt.undefines.Load())
	}
}

// TestAgentTokenSeesOnlyItsNode: the agent's token reads no other node's assignments.
func TestAgentTokenSeesOnlyItsNode(t *testing.T) {
	w := newWorld(t)
	other := newWorldNode(t, w)
	ag, err := nodeagent.New(nodeagent.Config{APIURL: w.url, Token: w.token, NodeID: strconv.Itoa(other),
		Hypervisor: mustSim(t), Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	if err := ag.Resync(context.Background()); err == nil {
		t.Fatal("an agent read another node's assignments")
	}
}

// newWorldNode adds a second node to w's cluster and returns its id.
func newWorldNode(t *testing.T, w *world) int {
	ctx := gqltest.System()
	c := w.env.Client
	host := c.Host.Create().SetName(uniq("host")).SaveX(ctx)
	cl := c.ComputeNode.QueryCluster(w.node).OnlyX(ctx)
	return c.ComputeNode.Create().SetName(uniq("node")).SetHost(host).SetCluster(cl).SaveX(ctx).ID
}

func mustSim(t *testing.T) *hypervisor.Simulated {
	s, err := hypervisor.NewSimulated(hypervisor.SimulatedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAgentRebootsOnNewGeneration: a running domain whose assignment moves to a newer
// generation with desired state RUNNING is rebooted once (provision's reboot contract), and
// the next resync leaves it alone.
func TestAgentRebootsOnNewGeneration(t *testing.T) {
	w := newWorld(t)
	cnt := &counting{Hypervisor: mustSim(t)}
	_, a := w.vmFix(t, assignment.DesiredStateRunning)
	var got reports
	ag, err := nodeagent.New(nodeagent.Config{APIURL: w.url, Token: w.token, NodeID: strconv.Itoa(w.node.ID),
		Hypervisor: cnt, Log: quiet(), OnReport: got.add})
	if err != nil {
		t.Fatal(err)
	}
	resync := func() {
		t.Helper()
		if err := ag.Resync(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	resync()
	if cnt.starts.Load() != 1 || cnt.reboots.Load() != 0 {
		t.Fatalf("create: %d starts, %d reboots", cnt.starts.Load(), cnt.reboots.Load())
	}
	w.env.Client.Assignment.UpdateOneID(a.ID).SetGeneration(a.Generation + 1).ExecX(gqltest.System())
	resync()
	resync()
	if cnt.reboots.Load() != 1 {
		t.Fatalf("reboot: %d reboots, want 1", cnt.reboots.Load())
	}
	// The reboot is reported at its generation even though the domain ends as it began.
	if r, ok := got.last(a.ID); !ok || r.Generation != a.Generation+1 || r.Status != "APPLIED" || r.ObservedState != "running" {
		t.Fatalf("report after the reboot: %+v", r)
	}
}
