package graph_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/controllers/drain"
	"github.com/virtflow/virtflow/domain/identity"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/apitoken"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/maintenance"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// Cordon, uncordon and drain through the GraphQL API on PostgreSQL.

// roleToken makes a user holding role (in tenant or node when not 0) and returns an API
// token of theirs.
func roleToken(t testing.TB, env *gqltest.Env, role authz.Role, tenant, node int) string {
	t.Helper()
	ctx := gqltest.System()
	b := env.Client.User.Create().SetUsername(uniq("user"))
	var tp, np *int
	if tenant != 0 {
		b.AddTenantIDs(tenant)
		tp = &tenant
	}
	if node != 0 {
		np = &node
	}
	u := b.SaveX(ctx)
	if _, err := env.Identity.GrantRole(ctx, u.ID, role, tp, np); err != nil {
		t.Fatalf("grant %s: %v", role, err)
	}
	plain, hash, prefix := identity.NewToken(apitoken.KindApi)
	env.Client.APIToken.Create().SetName(uniq("token")).SetTokenHash(hash).SetPrefix(prefix).
		SetKind(apitoken.KindApi).SetScope(apitoken.ScopeReadWrite).SetOwnerID(u.ID).SaveX(ctx)
	return plain
}

const (
	nodeFields    = `id name status schedulable cordonReason drainState drainMessage drainDeadline`
	cordonNode    = `mutation($id: ID!, $reason: String) { cordonNode(id: $id, reason: $reason) { ` + nodeFields + ` } }`
	uncordonNode  = `mutation($id: ID!) { uncordonNode(id: $id) { ` + nodeFields + ` } }`
	drainNodeCall = `mutation($id: ID!, $timeout: Int) { drainNode(id: $id, timeoutSeconds: $timeout) {
		node { ` + nodeFields + ` }
		maintenance { id title status automatic description nodes { edges { node { id } } } }
		unmovable { virtualMachine { id name } reason }
		moving { id name node { id name } } } }`
)

type drainedNode struct {
	ID, Name, Status string
	Schedulable      bool
	CordonReason     *string
	DrainState       *string
	DrainMessage     *string
	DrainDeadline    *string
}

type drainReport struct {
	Node        drainedNode
	Maintenance struct {
		ID, Title, Status, Description string
		Automatic                      bool
		Nodes                          connection
	}
	Unmovable []struct {
		VirtualMachine struct{ ID, Name string }
		Reason         string
	}
	Moving []struct {
		ID, Name string
		Node     struct{ ID, Name string }
	}
}

func strOf(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// TestCordonUncordon: operators cordon and uncordon, idempotently; nobody else may.
func TestCordonUncordon(t *testing.T) {
	env, _ := newEnv(t)
	s := site(t, env)
	node := gqltest.ID(s.Nodes[0].ID)

	var out struct{ CordonNode drainedNode }
	env.MustDo(t, cordonNode, map[string]any{"id": node, "reason": "disk replacement"}, &out)
	if out.CordonNode.Schedulable || strOf(out.CordonNode.CordonReason) != "disk replacement" {
		t.Fatalf("cordoned node = %+v", out.CordonNode)
	}
	// Again, without a reason: still cordoned, the reason kept.
	env.MustDo(t, cordonNode, map[string]any{"id": node}, &out)
	if out.CordonNode.Schedulable || strOf(out.CordonNode.CordonReason) != "disk replacement" {
		t.Fatalf("cordoned twice = %+v", out.CordonNode)
	}
	// A cordoned node takes no new VM.
	fl, _ := s.Flavor(gqltest.System(), 2, 1024, 10, false)
	tryVM(t, env, vmIn(s, gqltest.ID(fl.ID), map[string]any{"schedulePolicy": map[string]any{"nodeNames": []string{s.Nodes[0].Name}}})).
		ExpectError(t, "NO_CAPACITY", "")

	var un struct{ UncordonNode drainedNode }
	for range 2 {
		env.MustDo(t, uncordonNode, map[string]any{"id": node}, &un)
		if !un.UncordonNode.Schedulable || strOf(un.UncordonNode.CordonReason) != "" {
			t.Fatalf("uncordoned node = %+v", un.UncordonNode)
		}
	}

	operator := roleToken(t, env, authz.RoleOperator, 0, 0)
	env.As(operator).MustDo(t, cordonNode, map[string]any{"id": node, "reason": "by an operator"}, &out)
	if out.CordonNode.Schedulable {
		t.Fatalf("operator's cordon did not cordon")
	}
	env.As(operator).MustDo(t, uncordonNode, map[string]any{"id": node}, &un)

	for _, c := range []struct {
		name, token, code string
	}{
		{"viewer", roleToken(t, env, authz.RoleViewer, 0, 0), "FORBIDDEN"},
		{"the node's agent", roleToken(t, env, authz.RoleAgent, 0, s.Nodes[0].ID), "FORBIDDEN"},
		{"another node's agent", roleToken(t, env, authz.RoleAgent, 0, s.Nodes[1].ID), "NOT_FOUND"},
		{"tenant member", roleToken(t, env, authz.RoleTenantMember, s.Tenant, 0), "FORBIDDEN"},
	} {
		t.Run(c.name, func(t *testing.T) {
			as := env.As(c.token)
			as.Do(t, cordonNode, map[string]any{"id": node, "reason": "x"}).ExpectError(t, c.code, "")
			as.Do(t, uncordonNode, map[string]any{"id": node}).ExpectError(t, c.code, "")
			as.Do(t, drainNodeCall, map[string]any{"id": node}).ExpectError(t, c.code, "")
		})
	}
	n := env.Client.ComputeNode.GetX(gqltest.System(), s.Nodes[0].ID)
	if !n.Schedulable || n.DrainState != nil {
		t.Fatalf("refused calls changed the node: %+v", n)
	}
}

// drainSite is three nodes of 12 vCPUs in one rack; nodes 1 and 2 have only 4 vCPUs
// free. On node 0: a VM pinned there, a small VM (2 vCPUs) that fits elsewhere with an
// assignment its agent applied, and a big one (6 vCPUs) that fits nowhere else.
type drainSite struct {
	s                  *placementtest.Site
	pinned, small, big placedVM
	smallAssignment    int
}

func newDrainSite(t *testing.T, env *gqltest.Env) drainSite {
	t.Helper()
	ctx := gqltest.System()
	s, err := placementtest.Build(ctx, env.Client, placementtest.Spec{Racks: 1, HostsPerRack: 3,
		CPU: 12, MemoryMB: 65536, DiskGB: 1000, Cores: 6})
	if err != nil {
		t.Fatal(err)
	}
	small, _ := s.Flavor(ctx, 2, 2048, 20, false)
	big, _ := s.Flavor(ctx, 6, 2048, 20, false)
	on0 := map[string]any{"schedulePolicy": map[string]any{"nodeNames": []string{s.Nodes[0].Name}}}
	d := drainSite{s: s}
	d.pinned = createVM(t, env, vmIn(s, gqltest.ID(small.ID), on0))
	// The movable ones land on node 0 while the others are cordoned.
	env.Client.ComputeNode.Update().Where(computenode.IDIn(s.Nodes[1].ID, s.Nodes[2].ID)).SetSchedulable(false).ExecX(ctx)
	d.small = createVM(t, env, vmIn(s, gqltest.ID(small.ID)))
	d.big = createVM(t, env, vmIn(s, gqltest.ID(big.ID)))
	env.Client.ComputeNode.Update().Where(computenode.IDIn(s.Nodes[1].ID, s.Nodes[2].ID)).
		SetSchedulable(true).SetCPUAllocated(8).ExecX(ctx)
	for _, vm := range []placedVM{d.pinned, d.small, d.big} {
		if vm.Node.Name != s.Nodes[0].Name {
			t.Fatalf("VM %s placed on %s, want %s", vm.Name, vm.Node.Name, s.Nodes[0].Name)
		}
	}
	d.smallAssignment = env.Client.Assignment.Create().SetNodeID(s.Nodes[0].ID).SetVirtualMachineID(atoi(t, d.small.ID)).
		SetStatus(assignment.StatusApplied).SetObservedState("running").SaveX(ctx).ID
	return d
}

// TestDrainNode: the pinned and the big VM cannot move and say why; the small one moves to
// a node with room (allocations switched, old assignment retired, new one created); the
// drain fails after its deadline naming the stuck VMs; uncordon ends it.
func TestDrainNode(t *testing.T) {
	env, _ := newEnv(t)
	ctx := gqltest.System()
	d := newDrainSite(t, env)
	s := d.s
	node0 := s.Nodes[0].ID

	var out struct{ DrainNode drainReport }
	env.MustDo(t, drainNodeCall, map[string]any{"id": gqltest.ID(node0), "timeout": 600}, &out)
	r := out.DrainNode
	if r.Node.Schedulable || strOf(r.Node.DrainState) != "DRAINING" || r.Node.DrainDeadline == nil {
		t.Fatalf("node after drainNode = %+v", r.Node)
	}
	if len(r.Unmovable) != 2 || r.Unmovable[0].VirtualMachine.ID != d.pinned.ID || r.Unmovable[1].VirtualMachine.ID != d.big.ID {
		t.Fatalf("unmovable = %+v, want %s and %s", r.Unmovable, d.pinned.Name, d.big.Name)
	}
	if !strings.Contains(r.Unmovable[0].Reason, "pinned") || !strings.Contains(r.Unmovable[1].Reason, "CPU") {
		t.Fatalf("unmovable reasons = %q, %q", r.Unmovable[0].Reason, r.Unmovable[1].Reason)
	}
	if len(r.Moving) != 1 || r.Moving[0].ID != d.small.ID || r.Moving[0].Node.ID == gqltest.ID(node0) {
		t.Fatalf("moving = %+v, want %s off node 0", r.Moving, d.small.Name)
	}
	msg := strOf(r.Node.DrainMessage)
	if !strings.Contains(msg, d.pinned.Name) || !strings.Contains(msg, d.big.Name) || !strings.Contains(msg, d.small.Name) {
		t.Fatalf("drainMessage %q does not name the VMs", msg)
	}
	m := r.Maintenance
	if !m.Automatic || m.Status != "IN_PROGRESS" || len(m.Nodes.Edges) != 1 || m.Nodes.ids()[0] != gqltest.ID(node0) {
		t.Fatalf("maintenance = %+v", m)
	}

	// Capacity moved with the VM: node 0 gave back 2 vCPUs, the new node took them.
	to := atoi(t, r.Moving[0].Node.ID)
	if got := env.Client.ComputeNode.GetX(ctx, node0).CPUAllocated; got != 8 {
		t.Errorf("node 0 cpuAllocated = %d, want 8 (pinned 2 + big 6)", got)
	}
	if got := env.Client.ComputeNode.GetX(ctx, to).CPUAllocated; got != 10 {
		t.Errorf("new node cpuAllocated = %d, want 10", got)
	}
	old := env.Client.Assignment.GetX(ctx, d.smallAssignment)
	if old.DesiredState != assignment.DesiredStateAbsent || old.Generation != 2 || old.Status != assignment.StatusPending {
		t.Errorf("old assignment = %+v, want desired ABSENT, generation 2, PENDING", old)
	}
	// Cold: nothing on the new node until the old copy is confirmed gone.
	if n := env.Client.Assignment.Query().Where(assignment.HasNodeWith(computenode.ID(to)),
		assignment.HasVirtualMachineWith(virtualmachine.ID(atoi(t, d.small.ID)))).CountX(ctx); n != 0 {
		t.Errorf("%d assignments on the new node while the old copy may run, want 0", n)
	}

	// A second drain while this one runs answers with it.
	var again struct{ DrainNode drainReport }
	env.MustDo(t, drainNodeCall, map[string]any{"id": gqltest.ID(node0)}, &again)
	if again.DrainNode.Maintenance.ID != m.ID {
		t.Errorf("second drainNode: maintenance %s, want the running drain's %s", again.DrainNode.Maintenance.ID, m.ID)
	}

	// Before the deadline the drain waits; after it, it fails naming what is stuck.
	if _, err := drain.Progress(context.Background(), env.Client, time.Now()); err != nil {
		t.Fatal(err)
	}
	n := env.Client.ComputeNode.GetX(ctx, node0)
	if drainOf(n) != computenode.DrainStateDraining || !strings.Contains(n.DrainMessage, "waiting") {
		t.Fatalf("before the deadline: %s %q", drainOf(n), n.DrainMessage)
	}
	if _, err := drain.Progress(context.Background(), env.Client, time.Now().Add(11*time.Minute)); err != nil {
		t.Fatal(err)
	}
	n = env.Client.ComputeNode.GetX(ctx, node0)
	if drainOf(n) != computenode.DrainStateFailed {
		t.Fatalf("after the deadline: drainState %s, want FAILED", drainOf(n))
	}
	for _, name := range []string{d.pinned.Name, d.big.Name, d.small.Name} {
		if !strings.Contains(n.DrainMessage, name) {
			t.Errorf("failed drainMessage %q does not name %s", n.DrainMessage, name)
		}
	}

	var un struct{ UncordonNode drainedNode }
	env.MustDo(t, uncordonNode, map[string]any{"id": gqltest.ID(node0)}, &un)
	if !un.UncordonNode.Schedulable || strOf(un.UncordonNode.DrainState) != "" {
		t.Fatalf("after uncordon: %+v", un.UncordonNode)
	}
	if st := env.Client.Maintenance.GetX(ctx, atoi(t, m.ID)).Status; st != maintenance.StatusClosed {
		t.Errorf("maintenance after uncordon: %s, want CLOSED", st)
	}
}

// TestConcurrentDrainNode: five drainNode calls at once open one maintenance record, and
// every call answers with it (the database admits one drain per node).
func TestConcurrentDrainNode(t *testing.T) {
	env, _ := newEnv(t)
	d := newDrainSite(t, env)
	node0 := d.s.Nodes[0].ID
	const calls = 5
	ids := make([]string, calls)
	errs := make([]string, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			var out struct{ DrainNode drainReport }
			r := env.Do(t, drainNodeCall, map[string]any{"id": gqltest.ID(node0), "timeout": 600})
			if len(r.Errors) > 0 {
				errs[i] = r.ErrorsString()
				return
			}
			if err := json.Unmarshal(r.Data, &out); err != nil {
				errs[i] = err.Error()
				return
			}
			ids[i] = out.DrainNode.Maintenance.ID
		})
	}
	wg.Wait()
	for i := range calls {
		if errs[i] != "" {
			t.Fatalf("call %d: %s", i, errs[i])
		}
		if ids[i] == "" || ids[i] != ids[0] {
			t.Errorf("call %d answered maintenance %q, call 0 %q: want one drain", i, ids[i], ids[0])
		}
	}
	n := env.Client.Maintenance.Query().Where(maintenance.Automatic(true), maintenance.HasNodesWith(computenode.ID(node0))).
		CountX(gqltest.System())
	if n != 1 {
		t.Fatalf("%d maintenance records for node %d after %d concurrent drains, want 1", n, node0, calls)
	}
}

// TestDrainCompletes: a node whose VMs all move is DRAINED once the old copies are torn
// down (its agent applied the ABSENT assignments), and the maintenance closes.
func TestDrainCompletes(t *testing.T) {
	env, _ := newEnv(t)
	ctx := gqltest.System()
	d := newDrainSite(t, env)
	node0 := d.s.Nodes[0].ID
	// Only the small VM stays on node 0.
	env.Client.VirtualMachine.Update().Where(virtualmachine.IDIn(atoi(t, d.pinned.ID), atoi(t, d.big.ID))).
		ClearNode().ExecX(ctx)

	var out struct{ DrainNode drainReport }
	env.MustDo(t, drainNodeCall, map[string]any{"id": gqltest.ID(node0)}, &out)
	if len(out.DrainNode.Unmovable) != 0 || len(out.DrainNode.Moving) != 1 || strOf(out.DrainNode.Node.DrainState) != "DRAINING" {
		t.Fatalf("report = %+v", out.DrainNode)
	}
	if _, err := drain.Progress(context.Background(), env.Client, time.Now()); err != nil {
		t.Fatal(err)
	}
	if st := drainOf(env.Client.ComputeNode.GetX(ctx, node0)); st != computenode.DrainStateDraining {
		t.Fatalf("with the old copy still there: %s, want DRAINING", st)
	}
	// The agent tore the old copy down.
	env.Client.Assignment.UpdateOneID(d.smallAssignment).SetStatus(assignment.StatusApplied).SetObservedState("absent").ExecX(ctx)
	if _, err := drain.Progress(context.Background(), env.Client, time.Now()); err != nil {
		t.Fatal(err)
	}
	n := env.Client.ComputeNode.GetX(ctx, node0)
	if drainOf(n) != computenode.DrainStateDrained || n.Schedulable {
		t.Fatalf("after teardown: %s schedulable=%v, want DRAINED and cordoned", drainOf(n), n.Schedulable)
	}
	if env.Client.Assignment.Query().Where(assignment.ID(d.smallAssignment)).ExistX(ctx) {
		t.Errorf("the torn-down assignment on the drained node is still there")
	}
	m := env.Client.Maintenance.GetX(ctx, atoi(t, out.DrainNode.Maintenance.ID))
	if m.Status != maintenance.StatusClosed || m.EndsAt == nil {
		t.Fatalf("maintenance = %s ends %v, want CLOSED with an end", m.Status, m.EndsAt)
	}
}

// TestDrainEmptyNode: a node without VMs is drained at once.
func TestDrainEmptyNode(t *testing.T) {
	env, _ := newEnv(t)
	s := site(t, env)
	var out struct{ DrainNode drainReport }
	env.MustDo(t, drainNodeCall, map[string]any{"id": gqltest.ID(s.Nodes[3].ID)}, &out)
	if strOf(out.DrainNode.Node.DrainState) != "DRAINED" || out.DrainNode.Maintenance.Status != "CLOSED" {
		t.Fatalf("empty node drain = %+v", out.DrainNode)
	}
}

// TestDrainSQLite: the embedded mode drains too (placement's move without row locks).
func TestDrainSQLite(t *testing.T) {
	env := gqltest.SQLite(t)
	d := newDrainSite(t, env)
	var out struct{ DrainNode drainReport }
	env.MustDo(t, drainNodeCall, map[string]any{"id": gqltest.ID(d.s.Nodes[0].ID)}, &out)
	if len(out.DrainNode.Unmovable) != 2 || len(out.DrainNode.Moving) != 1 || out.DrainNode.Moving[0].ID != d.small.ID {
		t.Fatalf("report = %+v", out.DrainNode)
	}
}

// drainOf is n's drain state, empty when it was never drained.
func drainOf(n *ent.ComputeNode) computenode.DrainState {
	if n.DrainState == nil {
		return ""
	}
	return *n.DrainState
}
