package graph_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/virtflow/virtflow/agent/hypervisor"
	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/controllers/outbox"
	"github.com/virtflow/virtflow/controllers/provision"
	"github.com/virtflow/virtflow/controllers/worker"
	"github.com/virtflow/virtflow/demo/fleet"
	"github.com/virtflow/virtflow/domain/identity"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/apitoken"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/outboxtask"
	"github.com/virtflow/virtflow/ent/regionservice"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/poll"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// The VM half of issue 6's end-to-end test, on PostgreSQL and a real Redis: mutations record
// tasks in the outbox, a relay moves them to Redis, a worker (package worker) sets the
// assignments, and a small in-test node agent realizes them on libvirtd's test:///default
// driver and reports through reportAssignmentStatus, as the node's own agent token.

// pvSite is a one-node site whose region has a name of its own on this machine: the Redis
// is shared with other test processes, and the region names the queue.
type pvSite struct {
	*placementtest.Site
	node   int
	queue  string
	flavor int
}

func pvRandom() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func newPVSite(t testing.TB, env *gqltest.Env) *pvSite {
	t.Helper()
	ctx := gqltest.System()
	s, err := placementtest.Build(ctx, env.Client, placementtest.Spec{Racks: 1, HostsPerRack: 1, CPU: 8, MemoryMB: 16384, DiskGB: 200, Cores: 4})
	if err != nil {
		t.Fatal(err)
	}
	name := "pv-" + pvRandom()
	env.Client.Region.UpdateOneID(s.Region).SetName(name).ExecX(ctx)
	f, err := s.Flavor(ctx, 1, 256, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	q := provision.Queue(name)
	t.Cleanup(func() {
		in := asynq.NewInspector(pvRedis(t))
		_ = in.DeleteQueue(q, true)
		_ = in.Close()
	})
	return &pvSite{Site: s, node: s.Nodes[0].ID, queue: q, flavor: f.ID}
}

func pvRedis(t testing.TB) asynq.RedisConnOpt {
	opts, err := redis.ParseURL(testdb.RedisURL())
	if err != nil {
		t.Fatal(err)
	}
	return asynq.RedisClientOpt{Addr: opts.Addr, DB: opts.DB, Password: opts.Password}
}

// pvPipeline runs a relay and a worker for the site's queue until the test ends.
type pvPipeline struct {
	maxRetry int
	fault    sync.Map // VM id (0: every VM) -> error to fail its tasks with
}

func (p *pvPipeline) start(t testing.TB, env *gqltest.Env, rd asynq.RedisConnOpt, queues []string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	opts := provision.TaskOptions
	if p.maxRetry > 0 {
		opts = func(kind string) []asynq.Option {
			return append(provision.TaskOptions(kind), asynq.MaxRetry(p.maxRetry))
		}
	}
	// Only this test's queues: the Redis is shared with other test processes, whose workers
	// must never see this database's tasks.
	relay := outbox.NewRelay(env.Client, rd, outbox.Config{Dialect: env.DB.Dialect, Options: opts, Poll: 20 * time.Millisecond, Queues: queues})
	wg.Add(2)
	go func() { defer wg.Done(); relay.Run(ctx) }()
	go func() {
		defer wg.Done()
		err := worker.Run(ctx, worker.Config{Redis: rd, Client: env.Client, Dialect: env.DB.Dialect, Concurrency: 4,
			Queues: queues, RetryCheck: 100 * time.Millisecond, QueueRefresh: 100 * time.Millisecond,
			RetryDelay: func(int, error, *asynq.Task) time.Duration { return 10 * time.Millisecond },
			Fault: func(kind string, vm int) error {
				if err, ok := p.fault.Load(vm); ok {
					return err.(error)
				}
				if err, ok := p.fault.Load(0); ok { // every VM of the pipeline
					return err.(error)
				}
				return nil
			}})
		if err != nil {
			t.Error(err)
		}
	}()
}

// pvVM is a VM as the tests read it.
type pvVM struct {
	ID           string
	Name         string
	Status       string
	StatusReason string
	Assignments  struct {
		Edges []struct {
			Node struct {
				ID           string
				DesiredState string
				Generation   int
				Status       string
			}
		}
	}
}

const pvVMFields = `id name status statusReason assignments { edges { node { id desiredState generation status } } }`

func pvCreate(t *testing.T, env *gqltest.Env, s *pvSite) pvVM {
	t.Helper()
	var out struct{ CreateVirtualMachine pvVM }
	env.MustDo(t, `mutation($in: CreateVirtualMachineInput!) { createVirtualMachine(input: $in) { `+pvVMFields+` } }`,
		map[string]any{"in": map[string]any{"name": uniq("pv"), "tenantID": gqltest.ID(s.Tenant), "regionID": gqltest.ID(s.Region),
			"flavorID": gqltest.ID(s.flavor)}}, &out)
	return out.CreateVirtualMachine
}

func pvRead(t *testing.T, env *gqltest.Env, id string) (pvVM, bool) {
	t.Helper()
	var out struct{ Node *pvVM }
	r := env.Do(t, `query($id: ID!) { node(id: $id) { ... on VirtualMachine { `+pvVMFields+` } } }`, map[string]any{"id": id})
	if len(r.Errors) > 0 {
		r.ExpectError(t, "NOT_FOUND", "")
		return pvVM{}, false
	}
	if err := json.Unmarshal(r.Data, &out); err != nil {
		t.Fatal(err)
	}
	if out.Node == nil {
		return pvVM{}, false
	}
	return *out.Node, true
}

// pvWait polls the VM through GraphQL until ok says so, failing after a deadline.
func pvWait(t *testing.T, env *gqltest.Env, id, what string, ok func(vm pvVM, exists bool) bool) pvVM {
	t.Helper()
	var vm pvVM
	poll.Until(t, 20*time.Second, func() error {
		var exists bool
		if vm, exists = pvRead(t, env, id); ok(vm, exists) {
			return nil
		}
		return fmt.Errorf("VM %s never became %s: last seen %+v (exists %v)", id, what, vm, exists)
	})
	return vm
}

func pvStatus(status string) func(pvVM, bool) bool {
	return func(vm pvVM, exists bool) bool { return exists && vm.Status == status }
}

func pvAction(t *testing.T, env *gqltest.Env, action, id string) gqltest.Response {
	t.Helper()
	return env.Do(t, fmt.Sprintf(`mutation($id: ID!) { %sVirtualMachine(id: $id) { %s } }`, action, pvVMFields), map[string]any{"id": id})
}

// pvAgent is a minimal node agent for the test: it polls its node's assignments through
// GraphQL with the node's agent token, realizes the newest generation on a hypervisor and
// reports. (The real agent is package nodeagent; this one only follows the contract.)
type pvAgent struct {
	env    *gqltest.Env
	h      hypervisor.Hypervisor
	offset int64 // added to VM ids: libvirt's test driver is shared by every process here
	done   map[string]int
}

func (a *pvAgent) domain(vmID string) string {
	id, _ := strconv.ParseInt(vmID, 10, 64)
	return hypervisor.DomainName(id + a.offset)
}

func (a *pvAgent) run(ctx context.Context, t testing.TB) {
	for ctx.Err() == nil {
		a.round(ctx, t)
		time.Sleep(20 * time.Millisecond)
	}
}

func (a *pvAgent) round(ctx context.Context, t testing.TB) {
	var out struct {
		Assignments struct {
			Edges []struct {
				Node struct {
					ID             string
					DesiredState   string
					Generation     int
					VirtualMachine struct {
						ID     string
						Status string
						Flavor struct {
							Vcpus    int
							MemoryMB int
						}
					}
				}
			}
		}
	}
	r := a.env.Do(t, `{ assignments(first: 1000) { edges { node { id desiredState generation
		virtualMachine { id status flavor { vcpus memoryMB } } } } } }`, nil)
	if len(r.Errors) > 0 || json.Unmarshal(r.Data, &out) != nil {
		return
	}
	for _, e := range out.Assignments.Edges {
		as := e.Node
		if a.done[as.ID] == as.Generation {
			continue
		}
		name := a.domain(as.VirtualMachine.ID)
		id, _ := strconv.ParseInt(as.VirtualMachine.ID, 10, 64)
		spec := hypervisor.DomainSpec{VMID: id + a.offset, Generation: int64(as.Generation),
			VCPUs: as.VirtualMachine.Flavor.Vcpus, MemoryMiB: int64(as.VirtualMachine.Flavor.MemoryMB)}
		var err error
		observed := ""
		switch as.DesiredState {
		case "RUNNING":
			if err = a.h.Define(ctx, spec); err == nil {
				if as.VirtualMachine.Status == "REBOOTING" {
					err = a.h.Reboot(ctx, name)
				} else {
					err = a.h.Start(ctx, name)
				}
			}
			observed = "running"
		case "STOPPED":
			if err = a.h.Define(ctx, spec); err == nil {
				err = a.h.Stop(ctx, name)
			}
			observed = "shut-off"
		case "ABSENT":
			err = a.h.Undefine(ctx, name)
			observed = "absent"
		}
		status, reason := "APPLIED", ""
		if err != nil {
			status, reason = "FAILED", err.Error()
		}
		rep := a.env.Do(t, `mutation($in: AssignmentStatusInput!) { reportAssignmentStatus(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"id": as.ID, "generation": as.Generation, "status": status,
				"observedState": observed, "reason": reason}})
		if len(rep.Errors) == 0 {
			a.done[as.ID] = as.Generation
		}
	}
}

func pvLibvirt(t *testing.T) hypervisor.Hypervisor {
	t.Helper()
	socket := os.Getenv("VIRTFLOW_TEST_LIBVIRT_SOCKET")
	if socket == "" {
		socket = hypervisor.DefaultSocket
		if _, err := os.Stat(socket); err != nil {
			t.Skipf("no libvirtd: VIRTFLOW_TEST_LIBVIRT_SOCKET is unset and %s does not exist", socket)
		}
	}
	h, err := hypervisor.NewLibvirt(context.Background(), hypervisor.LibvirtConfig{Socket: socket, URI: "test:///default",
		PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatalf("connect to libvirtd test:///default: %v", err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// TestVMLifecycleEndToEnd: createVirtualMachine → outbox → relay → Redis → worker →
// assignment → agent realizes it on libvirtd (test:///default) → reportAssignmentStatus →
// ACTIVE; then stop, start, reboot and delete, each checked in the API and in libvirt.
func TestVMLifecycleEndToEnd(t *testing.T) {
	env, _ := newEnv(t)
	s := newPVSite(t, env)
	h := pvLibvirt(t)
	(&pvPipeline{}).start(t, env, pvRedis(t), []string{s.queue})

	token, err := fleet.IssueAgentToken(gqltest.System(), env.Client, env.Identity, s.node)
	if err != nil {
		t.Fatal(err)
	}
	off, _ := rand.Int(rand.Reader, big.NewInt(1<<40))
	agent := &pvAgent{env: env.As(token), h: h, offset: 1<<50 + off.Int64(), done: map[string]int{}}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { defer close(stopped); agent.run(ctx, t) }()
	t.Cleanup(func() { cancel(); <-stopped })

	vm := pvCreate(t, env, s)
	if vm.Status != "INITIALIZING" {
		t.Fatalf("new VM is %s, want INITIALIZING", vm.Status)
	}
	domainState := func() hypervisor.DomainState {
		st, err := h.State(context.Background(), agent.domain(vm.ID))
		if err != nil {
			t.Fatalf("domain of VM %s: %v", vm.ID, err)
		}
		return st
	}
	got := pvWait(t, env, vm.ID, "ACTIVE", pvStatus("ACTIVE"))
	if st := domainState(); st != hypervisor.StateRunning {
		t.Fatalf("ACTIVE VM's domain is %s, want running", st)
	}
	if got.StatusReason == "" || len(got.Assignments.Edges) != 1 || got.Assignments.Edges[0].Node.Status != "APPLIED" {
		t.Fatalf("ACTIVE VM: %+v; want a reason and one APPLIED assignment", got)
	}

	r := pvAction(t, env, "stop", vm.ID)
	if len(r.Errors) > 0 {
		t.Fatal(r.ErrorsString())
	}
	pvWait(t, env, vm.ID, "STOPPED", pvStatus("STOPPED"))
	if st := domainState(); st != hypervisor.StateShutOff {
		t.Fatalf("STOPPED VM's domain is %s, want shut-off", st)
	}

	if r := pvAction(t, env, "start", vm.ID); len(r.Errors) > 0 {
		t.Fatal(r.ErrorsString())
	}
	pvWait(t, env, vm.ID, "ACTIVE again", pvStatus("ACTIVE"))
	if st := domainState(); st != hypervisor.StateRunning {
		t.Fatalf("restarted VM's domain is %s, want running", st)
	}

	if r := pvAction(t, env, "reboot", vm.ID); len(r.Errors) > 0 {
		t.Fatal(r.ErrorsString())
	}
	got = pvWait(t, env, vm.ID, "ACTIVE after the reboot", func(v pvVM, ok bool) bool {
		return ok && v.Status == "ACTIVE" && len(v.Assignments.Edges) == 1 && v.Assignments.Edges[0].Node.Generation == 4
	})
	if got.Assignments.Edges[0].Node.DesiredState != "RUNNING" {
		t.Fatalf("after the reboot: %+v", got)
	}

	var del struct{ DeleteVirtualMachine string }
	env.MustDo(t, `mutation($id: ID!) { deleteVirtualMachine(id: $id) }`, map[string]any{"id": vm.ID}, &del)
	pvWait(t, env, vm.ID, "deleted", func(_ pvVM, exists bool) bool { return !exists })
	if _, err := h.State(context.Background(), agent.domain(vm.ID)); !errors.Is(err, hypervisor.ErrNotFound) {
		t.Fatalf("domain of the deleted VM: %v; want it gone", err)
	}
	n := env.Client.ComputeNode.GetX(gqltest.System(), s.node)
	if n.CPUAllocated != 0 || n.MemoryAllocatedMB != 0 {
		t.Fatalf("node still holds %d vCPUs, %d MB after the delete", n.CPUAllocated, n.MemoryAllocatedMB)
	}
}

// pvForce puts a VM into a state with an assignment at generation gen, as if the pipeline
// had brought it there.
func pvForce(t *testing.T, env *gqltest.Env, s *pvSite, id string, status virtualmachine.Status, desired assignment.DesiredState, gen int64) int {
	t.Helper()
	ctx := gqltest.System()
	vmID, _ := strconv.Atoi(id)
	env.Client.VirtualMachine.UpdateOneID(vmID).SetStatus(status).ExecX(ctx)
	a, err := env.Client.Assignment.Query().Where(assignment.HasVirtualMachineWith(virtualmachine.ID(vmID))).Only(ctx)
	if ent.IsNotFound(err) {
		a = env.Client.Assignment.Create().SetNodeID(s.node).SetVirtualMachineID(vmID).SetDesiredState(desired).
			SetGeneration(gen).SetStatus(assignment.StatusApplied).SaveX(ctx)
	} else if err != nil {
		t.Fatal(err)
	} else {
		a = a.Update().SetDesiredState(desired).SetGeneration(gen).SetStatus(assignment.StatusApplied).SaveX(ctx)
	}
	return a.ID
}

// TestVMPowerStateValidation: every action against every state it does not allow is
// VALIDATION on field id; asking for the state a VM is in or heading to is a no-op; an
// accepted action moves the VM to its transitional state and records one task.
func TestVMPowerStateValidation(t *testing.T) {
	env, _ := newEnv(t)
	s := newPVSite(t, env)
	vm := pvCreate(t, env, s)
	vmID, _ := strconv.Atoi(vm.ID)
	tasks := func() int {
		return env.Client.OutboxTask.Query().Where(outboxtask.Queue(s.queue)).CountX(gqltest.System())
	}
	if n := tasks(); n != 1 {
		t.Fatalf("createVirtualMachine recorded %d tasks, want 1 (vm:create)", n)
	}
	// INITIALIZING: nothing but delete.
	for _, a := range []string{"start", "stop", "reboot"} {
		pvAction(t, env, a, vm.ID).ExpectError(t, "VALIDATION", "id")
	}
	cases := []struct {
		status  virtualmachine.Status
		desired assignment.DesiredState
		action  string
		want    string // resulting status, or VALIDATION
	}{
		{virtualmachine.StatusActive, assignment.DesiredStateRunning, "start", "ACTIVE"},
		{virtualmachine.StatusActive, assignment.DesiredStateRunning, "stop", "STOPPING"},
		{virtualmachine.StatusStopping, assignment.DesiredStateStopped, "stop", "STOPPING"},
		{virtualmachine.StatusStopping, assignment.DesiredStateStopped, "start", "VALIDATION"},
		{virtualmachine.StatusStopped, assignment.DesiredStateStopped, "stop", "STOPPED"},
		{virtualmachine.StatusStopped, assignment.DesiredStateStopped, "reboot", "VALIDATION"},
		{virtualmachine.StatusStopped, assignment.DesiredStateStopped, "start", "STARTING"},
		{virtualmachine.StatusActive, assignment.DesiredStateRunning, "reboot", "REBOOTING"},
		{virtualmachine.StatusRebooting, assignment.DesiredStateRunning, "reboot", "REBOOTING"},
		{virtualmachine.StatusRebooting, assignment.DesiredStateRunning, "stop", "VALIDATION"},
		{virtualmachine.StatusError, assignment.DesiredStateRunning, "start", "STARTING"},
		{virtualmachine.StatusError, assignment.DesiredStateRunning, "stop", "STOPPING"},
		{virtualmachine.StatusDeleting, assignment.DesiredStateAbsent, "start", "VALIDATION"},
		{virtualmachine.StatusCreating, assignment.DesiredStateRunning, "stop", "VALIDATION"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s_%s", c.action, c.status), func(t *testing.T) {
			pvForce(t, env, s, vm.ID, c.status, c.desired, 5)
			before := tasks()
			r := pvAction(t, env, c.action, vm.ID)
			if c.want == "VALIDATION" {
				e := r.ExpectError(t, "VALIDATION", "id")
				if tasks() != before {
					t.Fatalf("a refused %s recorded a task (%s)", c.action, e.Message)
				}
				return
			}
			if len(r.Errors) > 0 {
				t.Fatal(r.ErrorsString())
			}
			got := env.Client.VirtualMachine.GetX(gqltest.System(), vmID)
			if string(got.Status) != c.want {
				t.Fatalf("%s on %s: %s, want %s", c.action, c.status, got.Status, c.want)
			}
			wantTasks := before
			if got.Status != c.status {
				wantTasks++
				if got.StatusReason == "" {
					t.Fatal("no status reason")
				}
			}
			if tasks() != wantTasks {
				t.Fatalf("%s on %s recorded %d tasks, want %d", c.action, c.status, tasks()-before, wantTasks-before)
			}
		})
	}
}

// TestTaskHandlersIdempotent: running a task twice leaves what running it once did; a task
// whose VM moved on does nothing.
func TestTaskHandlersIdempotent(t *testing.T) {
	env, _ := newEnv(t)
	s := newPVSite(t, env)
	vm := pvCreate(t, env, s)
	vmID, _ := strconv.Atoi(vm.ID)
	h := &provision.Handlers{Client: env.Client}
	run := func(kind string, from int64) {
		t.Helper()
		p, _ := json.Marshal(provision.Payload{VM: vmID, From: from})
		if err := h.ProcessTask(context.Background(), asynq.NewTask(kind, p)); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
	}
	assignments := func() []*ent.Assignment {
		return env.Client.Assignment.Query().Where(assignment.HasVirtualMachineWith(virtualmachine.ID(vmID))).AllX(gqltest.System())
	}
	run(provision.TypeVMCreate, 0)
	run(provision.TypeVMCreate, 0)
	as := assignments()
	if len(as) != 1 || as[0].Generation != 1 || as[0].DesiredState != assignment.DesiredStateRunning {
		t.Fatalf("after vm:create twice: %v; want one RUNNING assignment at generation 1", as)
	}
	if st := env.Client.VirtualMachine.GetX(gqltest.System(), vmID).Status; st != virtualmachine.StatusCreating {
		t.Fatalf("VM is %s after vm:create, want CREATING", st)
	}
	pvForce(t, env, s, vm.ID, virtualmachine.StatusActive, assignment.DesiredStateRunning, 1)
	if r := pvAction(t, env, "stop", vm.ID); len(r.Errors) > 0 {
		t.Fatal(r.ErrorsString())
	}
	run(provision.TypeVMStop, 1)
	run(provision.TypeVMStop, 1)
	as = assignments()
	if len(as) != 1 || as[0].Generation != 2 || as[0].DesiredState != assignment.DesiredStateStopped || as[0].Status != assignment.StatusPending {
		t.Fatalf("after vm:stop twice: %+v; want one PENDING STOPPED assignment at generation 2", as[0])
	}
	// A late vm:start for a VM that is no longer STARTING changes nothing.
	run(provision.TypeVMStart, 2)
	if a := assignments()[0]; a.Generation != 2 || a.DesiredState != assignment.DesiredStateStopped {
		t.Fatalf("a superseded vm:start changed the assignment: %+v", a)
	}
}

// TestStaleReportsIgnored: reports for an older generation change nothing, a newer one is
// VALIDATION on generation, another node's agent does not see the assignment, and a current
// FAILED report puts the VM in ERROR with the agent's reason.
func TestStaleReportsIgnored(t *testing.T) {
	env, _ := newEnv(t)
	s := newPVSite(t, env)
	vm := pvCreate(t, env, s)
	vmID, _ := strconv.Atoi(vm.ID)
	aID := pvForce(t, env, s, vm.ID, virtualmachine.StatusStopping, assignment.DesiredStateStopped, 3)
	env.Client.Assignment.UpdateOneID(aID).SetStatus(assignment.StatusPending).ExecX(gqltest.System())
	token, err := fleet.IssueAgentToken(gqltest.System(), env.Client, env.Identity, s.node)
	if err != nil {
		t.Fatal(err)
	}
	agent := env.As(token)
	report := func(e *gqltest.Env, gen int, status, reason string) gqltest.Response {
		return e.Do(t, `mutation($in: AssignmentStatusInput!) { reportAssignmentStatus(input: $in) { id generation status } }`,
			map[string]any{"in": map[string]any{"id": gqltest.ID(aID), "generation": gen, "status": status, "observedState": "running", "reason": reason}})
	}
	if r := report(agent, 2, "APPLIED", ""); len(r.Errors) > 0 {
		t.Fatal(r.ErrorsString())
	}
	a := env.Client.Assignment.GetX(gqltest.System(), aID)
	if a.Status != assignment.StatusPending || a.ObservedState != "" {
		t.Fatalf("a stale report changed the assignment: %+v", a)
	}
	if st := env.Client.VirtualMachine.GetX(gqltest.System(), vmID).Status; st != virtualmachine.StatusStopping {
		t.Fatalf("a stale report moved the VM to %s", st)
	}
	report(agent, 4, "APPLIED", "").ExpectError(t, "VALIDATION", "generation")

	// A tenant member may not report for a node.
	report(env.As(memberToken(t, env, s.Tenant)), 3, "APPLIED", "").ExpectError(t, "FORBIDDEN", "")

	if r := report(agent, 3, "FAILED", "disk image missing"); len(r.Errors) > 0 {
		t.Fatal(r.ErrorsString())
	}
	got, _ := pvRead(t, env, vm.ID)
	if got.Status != "ERROR" || got.StatusReason == "" || !strings.Contains(got.StatusReason, "disk image missing") {
		t.Fatalf("after a FAILED report: %+v; want ERROR naming the agent's reason", got)
	}
}

// TestRetriesExhausted: a vm:create that fails every attempt ends with the VM in ERROR and
// the failure as its reason, visible through GraphQL.
func TestRetriesExhausted(t *testing.T) {
	env, _ := newEnv(t)
	s := newPVSite(t, env)
	p := &pvPipeline{maxRetry: 2}
	p.fault.Store(0, errors.New("injected: hypervisor host unreachable"))
	p.start(t, env, pvRedis(t), []string{s.queue})
	vm := pvCreate(t, env, s)
	got := pvWait(t, env, vm.ID, "ERROR", pvStatus("ERROR"))
	if !strings.Contains(got.StatusReason, "injected: hypervisor host unreachable") || !strings.Contains(got.StatusReason, "after 3 attempts") {
		t.Fatalf("ERROR reason %q; want the last error after 3 attempts (MaxRetry 2)", got.StatusReason)
	}
	// ERROR can be retried: start creates it again.
	p.fault.Delete(0)
	if r := pvAction(t, env, "start", got.ID); len(r.Errors) > 0 {
		t.Fatal(r.ErrorsString())
	}
	pvWait(t, env, got.ID, "CREATING after the retry", pvStatus("CREATING"))
}

// TestDeleteNeverRealizedIsImmediate: a VM whose vm:create has not run yet is deleted at
// once and gives its capacity back; the queued vm:create then finds nothing to do.
func TestDeleteNeverRealizedIsImmediate(t *testing.T) {
	env, _ := newEnv(t)
	s := newPVSite(t, env)
	vm := pvCreate(t, env, s)
	var del struct{ DeleteVirtualMachine string }
	env.MustDo(t, `mutation($id: ID!) { deleteVirtualMachine(id: $id) }`, map[string]any{"id": vm.ID}, &del)
	if _, ok := pvRead(t, env, vm.ID); ok {
		t.Fatal("the VM outlived its delete")
	}
	if n := env.Client.ComputeNode.GetX(gqltest.System(), s.node); n.CPUAllocated != 0 {
		t.Fatalf("node holds %d vCPUs after the delete", n.CPUAllocated)
	}
	vmID, _ := strconv.Atoi(vm.ID)
	h := &provision.Handlers{Client: env.Client}
	p, _ := json.Marshal(provision.Payload{VM: vmID})
	if err := h.ProcessTask(context.Background(), asynq.NewTask(provision.TypeVMCreate, p)); err != nil {
		t.Fatalf("vm:create of a deleted VM: %v", err)
	}
}

// TestProvisioningEmbedded: the embedded mode, SQLite and the in-process Redis, with a
// worker serving every queue, started before the region exists (it picks up the new
// region's queue): a created VM gets its assignment (CREATING).
func TestProvisioningEmbedded(t *testing.T) {
	env := gqltest.SQLite(t)
	rd, err := infra.OpenRedis(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rd.Close() })
	(&pvPipeline{}).start(t, env, rd.Asynq, nil)
	s := newPVSite(t, env)
	vm := pvCreate(t, env, s)
	got := pvWait(t, env, vm.ID, "CREATING", pvStatus("CREATING"))
	if len(got.Assignments.Edges) != 1 || got.Assignments.Edges[0].Node.DesiredState != "RUNNING" {
		t.Fatalf("embedded: %+v; want one RUNNING assignment", got)
	}
}

// pvRoleToken is a read-write API token of a new user holding role (in tenant or on node
// when not zero).
func pvRoleToken(t *testing.T, env *gqltest.Env, role authz.Role, tenant, node int) string {
	t.Helper()
	ctx := gqltest.System()
	u := env.Client.User.Create().SetUsername(uniq("pv-user")).SaveX(ctx)
	var tp, np *int
	if tenant != 0 {
		tp = &tenant
	}
	if node != 0 {
		np = &node
	}
	if _, err := env.Identity.GrantRole(ctx, u.ID, role, tp, np); err != nil {
		t.Fatal(err)
	}
	plain, hash, prefix := identity.NewToken(apitoken.KindApi)
	env.Client.APIToken.Create().SetName(uniq("pv-token")).SetTokenHash(hash).SetPrefix(prefix).
		SetKind(apitoken.KindApi).SetScope(apitoken.ScopeReadWrite).SetOwnerID(u.ID).SaveX(ctx)
	return plain
}

// TestProvisioningAuthorization: power actions are for those who may change the VM (its
// tenant's members, admins), reports for the node's own agent and operators.
func TestProvisioningAuthorization(t *testing.T) {
	env, _ := newEnv(t)
	s := newPVSite(t, env)
	vm := pvCreate(t, env, s)
	aID := pvForce(t, env, s, vm.ID, virtualmachine.StatusActive, assignment.DesiredStateRunning, 1)
	other := env.Client.Tenant.Create().SetName(uniq("pv-other")).SaveX(gqltest.System()).ID

	pvAction(t, env.As(pvRoleToken(t, env, authz.RoleViewer, 0, 0)), "stop", vm.ID).ExpectError(t, "FORBIDDEN", "")
	pvAction(t, env.As(pvRoleToken(t, env, authz.RoleOperator, 0, 0)), "stop", vm.ID).ExpectError(t, "FORBIDDEN", "")
	pvAction(t, env.As(memberToken(t, env, other)), "stop", vm.ID).ExpectError(t, "NOT_FOUND", "")
	if st := env.Client.VirtualMachine.GetX(gqltest.System(), mustAtoi(vm.ID)).Status; st != virtualmachine.StatusActive {
		t.Fatalf("a refused stop left the VM %s", st)
	}
	member := env.As(memberToken(t, env, s.Tenant))
	if r := member.Do(t, `mutation($id: ID!) { stopVirtualMachine(id: $id) { id status statusReason } }`, map[string]any{"id": vm.ID}); len(r.Errors) > 0 {
		t.Fatalf("the tenant's member may stop its VM: %s", r.ErrorsString())
	}

	report := `mutation($in: AssignmentStatusInput!) { reportAssignmentStatus(input: $in) { id status } }`
	in := map[string]any{"in": map[string]any{"id": gqltest.ID(aID), "generation": 1, "status": "APPLYING"}}
	// Another node's agent does not even see the assignment.
	otherNode, err := s.AddNodes(gqltest.System(), s.Cluster, placementtest.Spec{Racks: 1, HostsPerRack: 1, CPU: 4, MemoryMB: 4096, DiskGB: 10, Cores: 2})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := fleet.IssueAgentToken(gqltest.System(), env.Client, env.Identity, otherNode[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	env.As(tok).Do(t, report, in).ExpectError(t, "NOT_FOUND", "")
	env.As(pvRoleToken(t, env, authz.RoleViewer, 0, 0)).Do(t, report, in).ExpectError(t, "FORBIDDEN", "")
	env.As(pvRoleToken(t, env, authz.RoleOperator, 0, 0)).MustDo(t, report, in, nil)
}

func mustAtoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(err)
	}
	return n
}

// TestReconcileStuckVMs: an INITIALIZING VM past the deadline gets its vm:create again, a
// bounded number of times, then ERROR; a VM whose agent never reports goes to ERROR naming
// the node and the assignment.
func TestReconcileStuckVMs(t *testing.T) {
	env, _ := newEnv(t)
	s := newPVSite(t, env)
	ctx := gqltest.System()
	old := time.Now().Add(-time.Hour)
	stale := func(id string) {
		env.Client.VirtualMachine.UpdateOneID(mustAtoi(id)).SetStatusChangedAt(old).ExecX(ctx)
	}
	rec := &provision.Reconciler{Client: env.Client, Config: provision.ReconcileConfig{Deadline: 30 * time.Minute, MaxRequeue: 1}}

	waiting := pvCreate(t, env, s)
	stale(waiting.ID)
	stuck := pvCreate(t, env, s)
	pvForce(t, env, s, stuck.ID, virtualmachine.StatusStopping, assignment.DesiredStateStopped, 2)
	stale(stuck.ID)

	requeued, failed, err := rec.Once(context.Background())
	if err != nil || requeued != 1 || failed != 1 {
		t.Fatalf("first round: requeued %d, failed %d, err %v; want 1 and 1", requeued, failed, err)
	}
	if n := env.Client.OutboxTask.Query().Where(outboxtask.Queue(s.queue), outboxtask.Kind(provision.TypeVMCreate)).CountX(ctx); n != 3 {
		t.Fatalf("%d vm:create tasks recorded, want 3 (two creates and one retry)", n)
	}
	got, _ := pvRead(t, env, waiting.ID)
	if got.Status != "INITIALIZING" || !strings.Contains(got.StatusReason, "enqueued again (1 of 1)") {
		t.Fatalf("requeued VM: %+v", got)
	}
	got, _ = pvRead(t, env, stuck.ID)
	if got.Status != "ERROR" || !strings.Contains(got.StatusReason, "did not report") || strings.Contains(got.StatusReason, s.Nodes[0].Name) {
		t.Fatalf("stuck VM: %+v; want ERROR saying its node did not report, without naming it (tenants read it)", got)
	}

	stale(waiting.ID)
	if requeued, failed, err := rec.Once(context.Background()); err != nil || requeued != 0 || failed != 1 {
		t.Fatalf("second round: requeued %d, failed %d, err %v; want the retries spent and the VM failed", requeued, failed, err)
	}
	got, _ = pvRead(t, env, waiting.ID)
	if got.Status != "ERROR" || !strings.Contains(got.StatusReason, "no worker took the request") {
		t.Fatalf("VM after its retries: %+v", got)
	}
}

// TestRegionServiceReplicasProvisioned: createRegionService and scaleRegionService record a
// vm:create for every new replica, in their own transaction.
func TestRegionServiceReplicasProvisioned(t *testing.T) {
	env, _ := newEnv(t)
	s := newPVSite(t, env)
	ctx := gqltest.System()
	creates := func() int {
		return env.Client.OutboxTask.Query().Where(outboxtask.Queue(s.queue), outboxtask.Kind(provision.TypeVMCreate)).CountX(ctx)
	}
	var out struct{ CreateRegionService struct{ ID string } }
	env.MustDo(t, `mutation($in: CreateRegionServiceInput!) { createRegionService(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"name": uniq("pv-svc"), "tenantID": gqltest.ID(s.Tenant), "regionID": gqltest.ID(s.Region),
			"flavorID": gqltest.ID(s.flavor), "replicas": 2}}, &out)
	if n := creates(); n != 2 {
		t.Fatalf("createRegionService with 2 replicas recorded %d vm:create tasks", n)
	}
	env.MustDo(t, `mutation($id: ID!) { scaleRegionService(id: $id, replicas: 3) { id } }`, map[string]any{"id": out.CreateRegionService.ID}, nil)
	if n := creates(); n != 3 {
		t.Fatalf("after scaling to 3: %d vm:create tasks, want 3", n)
	}
}

// TestAsynqmonAdminsOnly: the Asynq web UI answers platform admins only.
func TestAsynqmonAdminsOnly(t *testing.T) {
	env, _ := newEnv(t)
	s := newPVSite(t, env)
	h := worker.Monitor(pvRedis(t), env.Identity.Middleware)
	get := func(token string) int {
		req := httptest.NewRequest(http.MethodGet, worker.MonitorPath+"/api/queues", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	if c := get(gqltest.AdminToken); c != http.StatusOK {
		t.Fatalf("admin: HTTP %d, want 200", c)
	}
	if c := get(memberToken(t, env, s.Tenant)); c != http.StatusForbidden {
		t.Fatalf("tenant member: HTTP %d, want 403", c)
	}
	if c := get(pvRoleToken(t, env, authz.RoleOperator, 0, 0)); c != http.StatusForbidden {
		t.Fatalf("operator: HTTP %d, want 403", c)
	}
	if c := get(""); c != http.StatusUnauthorized {
		t.Fatalf("no token: HTTP %d, want 401", c)
	}
}

// TestDeleteRegionServiceWithRealizedReplicas: deleting a service whose replicas run on
// their nodes makes it DELETING and its replicas DELETING with ABSENT assignments; the
// service row goes once the agents report the last replica gone.
func TestDeleteRegionServiceWithRealizedReplicas(t *testing.T) {
	env, _ := newEnv(t)
	s := newPVSite(t, env)
	ctx := gqltest.System()
	var out struct{ CreateRegionService struct{ ID string } }
	env.MustDo(t, `mutation($in: CreateRegionServiceInput!) { createRegionService(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"name": uniq("pv-svc"), "tenantID": gqltest.ID(s.Tenant), "regionID": gqltest.ID(s.Region),
			"flavorID": gqltest.ID(s.flavor), "replicas": 2}}, &out)
	svc := mustAtoi(out.CreateRegionService.ID)
	vms := env.Client.VirtualMachine.Query().Where(virtualmachine.HasRegionServiceWith(regionservice.ID(svc))).IDsX(ctx)
	h := &provision.Handlers{Client: env.Client}
	for _, id := range vms { // realize them: vm:create, then the agent's report
		p, _ := json.Marshal(provision.Payload{VM: id})
		if err := h.ProcessTask(context.Background(), asynq.NewTask(provision.TypeVMCreate, p)); err != nil {
			t.Fatal(err)
		}
	}
	report := func(vm int, gen int, observed string) {
		a := env.Client.Assignment.Query().Where(assignment.HasVirtualMachineWith(virtualmachine.ID(vm))).OnlyX(ctx)
		env.MustDo(t, `mutation($in: AssignmentStatusInput!) { reportAssignmentStatus(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"id": gqltest.ID(a.ID), "generation": gen, "status": "APPLIED", "observedState": observed}}, nil)
	}
	svcStatus := func() (regionservice.Status, string) {
		var out struct {
			Node struct{ Status, StatusReason string }
		}
		env.MustDo(t, `query($id: ID!) { node(id: $id) { ... on RegionService { status statusReason } } }`, map[string]any{"id": gqltest.ID(svc)}, &out)
		return regionservice.Status(out.Node.Status), out.Node.StatusReason
	}
	if st, why := svcStatus(); st != regionservice.StatusCreating || why == "" {
		t.Fatalf("service with replicas being created: %s (%q), want CREATING", st, why)
	}
	report(vms[0], 1, "running")
	if st, why := svcStatus(); st != regionservice.StatusCreating || !strings.Contains(why, "1 of 2 replicas active") {
		t.Fatalf("service with one replica running: %s (%q)", st, why)
	}
	report(vms[1], 1, "running")
	if st, why := svcStatus(); st != regionservice.StatusActive || !strings.Contains(why, "2 of 2") {
		t.Fatalf("service with both replicas running: %s (%q), want ACTIVE", st, why)
	}
	env.MustDo(t, `mutation($id: ID!) { deleteRegionService(id: $id) }`, map[string]any{"id": out.CreateRegionService.ID}, nil)
	if st := env.Client.RegionService.GetX(ctx, svc).Status; st != regionservice.StatusDeleting {
		t.Fatalf("service is %s, want DELETING", st)
	}
	for _, id := range vms {
		if st := env.Client.VirtualMachine.GetX(ctx, id).Status; st != virtualmachine.StatusDeleting {
			t.Fatalf("replica %d is %s, want DELETING", id, st)
		}
		p, _ := json.Marshal(provision.Payload{VM: id, From: 1})
		if err := h.ProcessTask(context.Background(), asynq.NewTask(provision.TypeVMDelete, p)); err != nil {
			t.Fatal(err)
		}
		report(id, 2, "absent")
	}
	if n := env.Client.VirtualMachine.Query().Where(virtualmachine.IDIn(vms...)).CountX(ctx); n != 0 {
		t.Fatalf("%d replicas left after their agents reported them gone", n)
	}
	if ok := env.Client.RegionService.Query().Where(regionservice.ID(svc)).ExistX(ctx); ok {
		t.Fatal("the service outlived its last replica")
	}
}

// BenchmarkCreateToActive measures the whole pipeline for 200 VMs: createVirtualMachine
// through GraphQL, outbox, relay, Redis, worker (concurrency 10), one agent loop over the
// simulated hypervisor (no delays) reporting each through reportAssignmentStatus, until every
// VM is ACTIVE. Figures: VMs/s, seconds per 200 VMs, and of those the seconds spent in the
// 200 sequential createVirtualMachine requests (placement included).
func BenchmarkCreateToActive(b *testing.B) {
	env := gqltest.Postgres(b, testdb.DSN(b))
	ctx := gqltest.System()
	site, err := placementtest.Build(ctx, env.Client, placementtest.Spec{Racks: 4, HostsPerRack: 2, CPU: 256, MemoryMB: 1 << 20, DiskGB: 10000, Cores: 64})
	if err != nil {
		b.Fatal(err)
	}
	name := "pv-bench-" + pvRandom()
	env.Client.Region.UpdateOneID(site.Region).SetName(name).ExecX(ctx)
	f, _ := site.Flavor(ctx, 1, 256, 1, false)
	rd := pvRedis(b)
	defer func() { in := asynq.NewInspector(rd); _ = in.DeleteQueue(provision.Queue(name), true); _ = in.Close() }()
	(&pvPipeline{}).start(b, env, rd, []string{provision.Queue(name)})
	sim, err := hypervisor.NewSimulated(hypervisor.SimulatedConfig{})
	if err != nil {
		b.Fatal(err)
	}
	agent := &pvAgent{env: env, h: sim, done: map[string]int{}}
	actx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { defer close(stopped); agent.run(actx, b) }()
	defer func() { cancel(); <-stopped }()

	const n = 200
	var elapsed, creating time.Duration
	for range b.N {
		start := time.Now()
		var ids []int
		for range n {
			var out struct{ CreateVirtualMachine struct{ ID string } }
			env.MustDo(b, `mutation($in: CreateVirtualMachineInput!) { createVirtualMachine(input: $in) { id } }`,
				map[string]any{"in": map[string]any{"name": uniq("bench"), "tenantID": gqltest.ID(site.Tenant),
					"regionID": gqltest.ID(site.Region), "flavorID": gqltest.ID(f.ID)}}, &out)
			ids = append(ids, mustAtoi(out.CreateVirtualMachine.ID))
		}
		creating += time.Since(start)
		poll.Until(b, 5*time.Minute, func() error {
			if got := env.Client.VirtualMachine.Query().Where(virtualmachine.IDIn(ids...), virtualmachine.StatusEQ(virtualmachine.StatusActive)).CountX(ctx); got < n {
				return fmt.Errorf("%d of %d VMs ACTIVE", got, n)
			}
			return nil
		})
		elapsed += time.Since(start)
	}
	b.ReportMetric(float64(n*b.N)/elapsed.Seconds(), "VMs/s")
	b.ReportMetric(elapsed.Seconds()/float64(b.N), "s/200VMs")
	b.ReportMetric(creating.Seconds()/float64(b.N), "s-creating/200VMs")
}

// TestRebootIgnoresRepeatedOldReport: between rebootVirtualMachine and its task, the agent
// repeating its APPLIED report of the running generation does not end REBOOTING.
func TestRebootIgnoresRepeatedOldReport(t *testing.T) {
	env, _ := newEnv(t)
	s := newPVSite(t, env)
	vm := pvCreate(t, env, s)
	aID := pvForce(t, env, s, vm.ID, virtualmachine.StatusActive, assignment.DesiredStateRunning, 3)
	if r := pvAction(t, env, "reboot", vm.ID); len(r.Errors) > 0 {
		t.Fatal(r.ErrorsString())
	}
	report := `mutation($in: AssignmentStatusInput!) { reportAssignmentStatus(input: $in) { id } }`
	in := func(gen int) map[string]any {
		return map[string]any{"in": map[string]any{"id": gqltest.ID(aID), "generation": gen, "status": "APPLIED", "observedState": "running"}}
	}
	env.MustDo(t, report, in(3), nil)
	if got, _ := pvRead(t, env, vm.ID); got.Status != "REBOOTING" {
		t.Fatalf("a repeated report of the old generation moved the VM to %s", got.Status)
	}
	h := &provision.Handlers{Client: env.Client}
	p, _ := json.Marshal(provision.Payload{VM: mustAtoi(vm.ID), From: 3})
	if err := h.ProcessTask(context.Background(), asynq.NewTask(provision.TypeVMReboot, p)); err != nil {
		t.Fatal(err)
	}
	env.MustDo(t, report, in(4), nil)
	if got, _ := pvRead(t, env, vm.ID); got.Status != "ACTIVE" {
		t.Fatalf("after the rebooted generation's report: %s, want ACTIVE", got.Status)
	}
}

// TestScaleDownRealizedReplica: scaling a service down removes a realized replica
// asynchronously (DELETING, then gone once its agent reports it absent); the service keeps
// the replicas asked for.
func TestScaleDownRealizedReplica(t *testing.T) {
	env, _ := newEnv(t)
	s := newPVSite(t, env)
	ctx := gqltest.System()
	var out struct{ CreateRegionService struct{ ID string } }
	env.MustDo(t, `mutation($in: CreateRegionServiceInput!) { createRegionService(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"name": uniq("pv-svc"), "tenantID": gqltest.ID(s.Tenant), "regionID": gqltest.ID(s.Region),
			"flavorID": gqltest.ID(s.flavor), "replicas": 2}}, &out)
	svc := mustAtoi(out.CreateRegionService.ID)
	vms := env.Client.VirtualMachine.Query().Where(virtualmachine.HasRegionServiceWith(regionservice.ID(svc))).IDsX(ctx)
	h := &provision.Handlers{Client: env.Client}
	for _, id := range vms {
		p, _ := json.Marshal(provision.Payload{VM: id})
		if err := h.ProcessTask(context.Background(), asynq.NewTask(provision.TypeVMCreate, p)); err != nil {
			t.Fatal(err)
		}
	}
	env.MustDo(t, `mutation($id: ID!) { scaleRegionService(id: $id, replicas: 1) { id replicas } }`, map[string]any{"id": out.CreateRegionService.ID}, nil)
	deleting := env.Client.VirtualMachine.Query().Where(virtualmachine.IDIn(vms...), virtualmachine.StatusEQ(virtualmachine.StatusDeleting)).AllX(ctx)
	if len(deleting) != 1 {
		t.Fatalf("%d replicas DELETING after scaling 2 → 1, want 1", len(deleting))
	}
	gone := deleting[0].ID
	p, _ := json.Marshal(provision.Payload{VM: gone, From: 1})
	if err := h.ProcessTask(context.Background(), asynq.NewTask(provision.TypeVMDelete, p)); err != nil {
		t.Fatal(err)
	}
	a := env.Client.Assignment.Query().Where(assignment.HasVirtualMachineWith(virtualmachine.ID(gone))).OnlyX(ctx)
	env.MustDo(t, `mutation($in: AssignmentStatusInput!) { reportAssignmentStatus(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"id": gqltest.ID(a.ID), "generation": 2, "status": "APPLIED", "observedState": "absent"}}, nil)
	if env.Client.VirtualMachine.Query().Where(virtualmachine.ID(gone)).ExistX(ctx) {
		t.Fatal("the removed replica outlived its agent's report")
	}
	if got := env.Client.RegionService.GetX(ctx, svc); got.Replicas != 1 {
		t.Fatalf("service has %d replicas, want 1", got.Replicas)
	}
}

// TestCreatesWhileRedisDown: 100 createVirtualMachine while the relay cannot reach Redis
// are all accepted and kept in the outbox; once a relay reaches Redis every one of them is
// carried out (CREATING with its assignment), none lost and none twice.
func TestCreatesWhileRedisDown(t *testing.T) {
	env, _ := newEnv(t)
	s := newPVSite(t, env)
	ctx := gqltest.System()
	env.Client.ComputeNode.UpdateOneID(s.node).SetCPUCapacity(200).SetMemoryCapacityMB(1 << 20).ExecX(ctx)
	downCtx, stopDown := context.WithCancel(context.Background())
	down := outbox.NewRelay(env.Client, asynq.RedisClientOpt{Addr: "127.0.0.1:1"},
		outbox.Config{Dialect: env.DB.Dialect, Poll: 20 * time.Millisecond, MaxBackoff: 50 * time.Millisecond,
			EnqueueTimeout: 100 * time.Millisecond, Queues: []string{s.queue}})
	downDone := make(chan struct{})
	go func() { defer close(downDone); down.Run(downCtx) }()

	var ids []int
	for range 100 {
		ids = append(ids, mustAtoi(pvCreate(t, env, s).ID))
	}
	stopDown()
	<-downDone
	pending := env.Client.OutboxTask.Query().Where(outboxtask.Queue(s.queue), outboxtask.DispatchedAtIsNil()).CountX(ctx)
	if pending != 100 {
		t.Fatalf("%d tasks waiting in the outbox while Redis was down, want 100", pending)
	}

	(&pvPipeline{}).start(t, env, pvRedis(t), []string{s.queue})
	poll.Until(t, 45*time.Second, func() error {
		if n := env.Client.VirtualMachine.Query().Where(virtualmachine.IDIn(ids...), virtualmachine.StatusEQ(virtualmachine.StatusCreating)).CountX(ctx); n != 100 {
			return fmt.Errorf("%d of 100 VMs carried out after Redis came back", n)
		}
		return nil
	})
	if n := env.Client.Assignment.Query().Where(assignment.HasVirtualMachineWith(virtualmachine.IDIn(ids...))).CountX(ctx); n != 100 {
		t.Fatalf("%d assignments for 100 VMs", n)
	}
}
