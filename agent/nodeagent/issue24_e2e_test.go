package nodeagent_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/virtflow/virtflow/agent/hypervisor"
	"github.com/virtflow/virtflow/agent/nodeagent"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/ent/volume"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// issue24 is issue 24's bed: startFleet's two nodes, each in an availability zone of its
// own, both agents running.
type issue24 struct {
	*fleetStack
	api    *nodeagent.Client
	n0, n1 int
	zones  [2]int
}

func newIssue24(t *testing.T) *issue24 {
	t.Helper()
	st := startFleet(t, 2)
	ctx, c := gqltest.System(), st.env.Client
	b := &issue24{fleetStack: st, api: &nodeagent.Client{URL: st.base, Token: gqltest.AdminToken},
		n0: st.site.Nodes[0].ID, n1: st.site.Nodes[1].ID}
	for i, n := range []int{b.n0, b.n1} {
		az := c.AvailabilityZone.Create().SetName(fmt.Sprintf("%s-az%d", st.site.Prefix, i)).SetRegionID(st.site.Region).SaveX(ctx)
		c.ComputeNode.UpdateOneID(n).SetAvailabilityZoneID(az.ID).ExecX(ctx)
		b.zones[i] = az.ID
	}
	st.startAgent(t, 0)
	st.startAgent(t, 1)
	return b
}

// do runs a GraphQL operation as the admin.
func (b *issue24) do(t *testing.T, query string, vars map[string]any, out any) error {
	t.Helper()
	return b.api.Do(gqltest.System(), query, vars, out)
}

// createVM creates a VM on node (the other node cordoned meanwhile) and waits for ACTIVE.
func (b *issue24) createVM(t *testing.T, name string, flavor, node int) int {
	t.Helper()
	ctx, c := gqltest.System(), b.env.Client
	c.ComputeNode.Update().Where(computenode.IDNEQ(node), computenode.IDIn(b.n0, b.n1)).SetSchedulable(false).ExecX(ctx)
	defer c.ComputeNode.Update().Where(computenode.IDIn(b.n0, b.n1)).SetSchedulable(true).ExecX(ctx)
	var out struct{ CreateVirtualMachine struct{ ID string } }
	if err := b.do(t, `mutation($in: CreateVirtualMachineInput!) { createVirtualMachine(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"name": name, "tenantID": gqltest.ID(b.site.Tenant),
			"regionID": gqltest.ID(b.site.Region), "flavorID": gqltest.ID(flavor)}}, &out); err != nil {
		t.Fatal(err)
	}
	id := mustInt(t, out.CreateVirtualMachine.ID)
	b.waitStatus(t, id, virtualmachine.StatusActive, node)
	return id
}

// waitStatus waits until VM id reads status on node.
func (b *issue24) waitStatus(t *testing.T, id int, status virtualmachine.Status, node int) {
	t.Helper()
	ctx, c := gqltest.System(), b.env.Client
	eventuallyWithin(t, 60*time.Second, fmt.Sprintf("VM %d %s on node %d", id, status, node), func() bool {
		return c.VirtualMachine.Query().Where(virtualmachine.ID(id), virtualmachine.StatusEQ(status),
			virtualmachine.HasNodeWith(computenode.ID(node))).ExistX(ctx)
	})
}

// power stops or starts VM id through the API.
func (b *issue24) power(t *testing.T, verb string, id int) {
	t.Helper()
	if err := b.do(t, fmt.Sprintf(`mutation($id: ID!) { %sVirtualMachine(id: $id) { id } }`, verb), map[string]any{"id": gqltest.ID(id)}, nil); err != nil {
		t.Fatalf("%s VM %d: %v", verb, id, err)
	}
}

// resize resizes VM id to flavor through the API and returns the status it reads at once.
func (b *issue24) resize(id, flavor int) (string, error) {
	var out struct{ ResizeVirtualMachine struct{ Status string } }
	err := b.api.Do(gqltest.System(), `mutation($id: ID!, $f: ID!) { resizeVirtualMachine(id: $id, flavorID: $f) { status } }`,
		map[string]any{"id": gqltest.ID(id), "f": gqltest.ID(flavor)}, &out)
	return out.ResizeVirtualMachine.Status, err
}

// assignments checks the database's word on VM id's assignments: at most one per node,
// at most one not desired ABSENT; it returns them.
func (b *issue24) assignments(t *testing.T, id int) []*ent.Assignment {
	t.Helper()
	as := b.env.Client.Assignment.Query().Where(assignment.VMID(id)).WithNode().AllX(gqltest.System())
	perNode, live := map[int]int{}, 0
	for _, a := range as {
		perNode[a.Edges.Node.ID]++
		if a.DesiredState != assignment.DesiredStateAbsent {
			live++
		}
	}
	for n, k := range perNode {
		if k > 1 {
			t.Errorf("VM %d has %d assignments on node %d", id, k, n)
		}
	}
	if live > 1 {
		t.Errorf("VM %d has %d live assignments", id, live)
	}
	return as
}

// TestIssue24ResizeWithVolume is issue 24's scenario on the real stack (PostgreSQL, Redis,
// server, worker, two agents on libvirt's test driver): a stopped VM with a volume whose node
// has no room for the new flavor is not resized onto another node (NO_CAPACITY naming the
// volume; nothing changed, the volume still ATTACHED on its node) but is resized in place
// where it fits. Without the volume, it is resized onto the other node: MOVING, then STOPPED
// there with the new node's zone and exactly one assignment; resized back again (onto the
// node holding the retired assignment of before), then started: one live assignment, one
// running domain, which stays running over several resyncs (no flapping).
func TestIssue24ResizeWithVolume(t *testing.T) {
	b := newIssue24(t)
	ctx, c := gqltest.System(), b.env.Client
	f2, err := b.site.Flavor(ctx, 2, 256, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	f3, err := b.site.Flavor(ctx, 3, 256, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	f4, err := b.site.Flavor(ctx, 4, 256, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	vm := b.createVM(t, "rz", b.flavor.ID, b.n0)
	b.power(t, "stop", vm)
	b.waitStatus(t, vm, virtualmachine.StatusStopped, b.n0)

	var vol struct{ CreateVolume struct{ ID string } }
	if err := b.do(t, `mutation($in: CreateVolumeInput!) { createVolume(input: $in) { id } }`, map[string]any{"in": map[string]any{
		"name": "rz-data", "sizeGB": 1, "tenantID": gqltest.ID(b.site.Tenant), "virtualMachineID": gqltest.ID(vm)}}, &vol); err != nil {
		t.Fatal(err)
	}
	volID := mustInt(t, vol.CreateVolume.ID)
	eventuallyWithin(t, 60*time.Second, "the volume ATTACHED", func() bool {
		return c.Volume.Query().Where(volume.ID(volID), volume.StatusEQ(volume.StatusAttached)).ExistX(ctx)
	})

	// Its node has no room (cordoned): the resize would leave the node, which the volume
	// cannot.
	c.ComputeNode.UpdateOneID(b.n0).SetSchedulable(false).ExecX(ctx)
	_, err = b.resize(vm, f2.ID)
	if err == nil || !strings.Contains(err.Error(), "NO_CAPACITY") || !strings.Contains(err.Error(), "rz-data") {
		t.Fatalf("resize of a VM with a volume off its full node: %v; want NO_CAPACITY naming volume rz-data", err)
	}
	got := c.VirtualMachine.Query().Where(virtualmachine.ID(vm)).WithNode().WithFlavor().OnlyX(ctx)
	if got.Edges.Node.ID != b.n0 || got.Edges.Flavor.ID != b.flavor.ID || got.Status != virtualmachine.StatusStopped {
		t.Fatalf("after the refused resize the VM is %s on node %d with flavor %d; want unchanged", got.Status, got.Edges.Node.ID, got.Edges.Flavor.ID)
	}
	v := c.Volume.Query().Where(volume.ID(volID)).WithNode().OnlyX(ctx)
	if v.Status != volume.StatusAttached || v.Edges.Node.ID != b.n0 {
		t.Fatalf("volume %s on node %d after the refused resize; want ATTACHED on node %d", v.Status, v.Edges.Node.ID, b.n0)
	}

	// In place, where it fits.
	c.ComputeNode.UpdateOneID(b.n0).SetSchedulable(true).ExecX(ctx)
	began := time.Now()
	if _, err := b.resize(vm, f2.ID); err != nil {
		t.Fatalf("in-place resize of a VM with a volume: %v", err)
	}
	eventuallyWithin(t, 60*time.Second, "the domain redefined at 2 vCPUs", func() bool {
		a := c.Assignment.Query().Where(assignment.VMID(vm), assignment.HasNodeWith(computenode.ID(b.n0))).OnlyX(ctx)
		return a.Status == assignment.StatusApplied
	})
	t.Logf("in-place resize (stopped VM with a volume): assignment applied after %s", time.Since(began).Round(time.Millisecond))
	b.assignments(t, vm)

	// Without the volume the VM may leave its node.
	if err := b.do(t, `mutation($id: ID!) { detachVolume(id: $id) { id } }`, map[string]any{"id": gqltest.ID(volID)}, nil); err != nil {
		t.Fatal(err)
	}
	eventuallyWithin(t, 60*time.Second, "the volume AVAILABLE", func() bool {
		return c.Volume.Query().Where(volume.ID(volID), volume.StatusEQ(volume.StatusAvailable)).ExistX(ctx)
	})
	c.ComputeNode.UpdateOneID(b.n0).SetSchedulable(false).ExecX(ctx)
	began = time.Now()
	status, err := b.resize(vm, f3.ID)
	if err != nil {
		t.Fatalf("resize onto the other node: %v", err)
	}
	if status != "MOVING" {
		t.Errorf("the VM reads %s right after a resize onto another node, want MOVING", status)
	}
	b.waitStatus(t, vm, virtualmachine.StatusStopped, b.n1)
	t.Logf("resize onto another node (stopped VM): MOVING → STOPPED on the new node after %s", time.Since(began).Round(time.Millisecond))
	got = c.VirtualMachine.Query().Where(virtualmachine.ID(vm)).WithAvailabilityZone().WithCluster().OnlyX(ctx)
	if got.Edges.AvailabilityZone == nil || got.Edges.AvailabilityZone.ID != b.zones[1] {
		t.Errorf("after the move the VM's zone is %v, want node 1's (%d)", got.Edges.AvailabilityZone, b.zones[1])
	}
	if got.StateAfterMove != nil {
		t.Errorf("state_after_move %v after the move ended, want none", *got.StateAfterMove)
	}
	eventuallyWithin(t, 30*time.Second, "the old node's retired assignment gone", func() bool {
		return len(b.assignments(t, vm)) == 1
	})

	// And back onto node 0 (cordon node 1, node 0 schedulable again).
	c.ComputeNode.UpdateOneID(b.n0).SetSchedulable(true).ExecX(ctx)
	c.ComputeNode.UpdateOneID(b.n1).SetSchedulable(false).ExecX(ctx)
	if _, err := b.resize(vm, f4.ID); err != nil {
		t.Fatalf("resize back onto node 0: %v", err)
	}
	b.waitStatus(t, vm, virtualmachine.StatusStopped, b.n0)
	c.ComputeNode.UpdateOneID(b.n1).SetSchedulable(true).ExecX(ctx)
	b.power(t, "start", vm)
	b.waitStatus(t, vm, virtualmachine.StatusActive, b.n0)
	eventuallyWithin(t, 30*time.Second, "one assignment left", func() bool { return len(b.assignments(t, vm)) == 1 })

	// No flapping: over three resyncs the one domain keeps running and nothing fails.
	for range 3 {
		time.Sleep(2 * time.Second)
		count, running, err := b.domains(t)
		if err != nil {
			t.Fatal(err)
		}
		if count[int64(vm)] != 1 || running[int64(vm)] != 1 {
			t.Fatalf("VM %d: %d domains, %d running; want exactly one running", vm, count[int64(vm)], running[int64(vm)])
		}
		cur := c.VirtualMachine.GetX(ctx, vm)
		if cur.Status != virtualmachine.StatusActive {
			t.Fatalf("VM reads %s (%s), want ACTIVE", cur.Status, cur.StatusReason)
		}
	}
	a := c.Assignment.Query().Where(assignment.VMID(vm)).OnlyX(ctx)
	if a.Status != assignment.StatusApplied || a.DesiredState != assignment.DesiredStateRunning {
		t.Errorf("the VM's assignment is %s/%s (%s), want APPLIED/RUNNING", a.DesiredState, a.Status, a.StatusReason)
	}
	if _, err := b.hvs[1].State(ctx, hypervisor.DomainName(int64(vm))); err == nil {
		t.Errorf("node 1 still has the VM's domain")
	}
}

// TestIssue24DrainMovesZone: a drain moves a running VM's zone with it (MOVING until the new
// copy runs, then ACTIVE in node 1's zone), so that a resize afterwards places it on its
// new node (which has room) rather than believing it must stay in the old zone; a VM with
// a volume is listed up front as unmovable on the node (drainUnmovable) and the drain ends
// FAILED as soon as the others moved, not at its deadline.
func TestIssue24DrainMovesZone(t *testing.T) {
	b := newIssue24(t)
	ctx, c := gqltest.System(), b.env.Client
	f2, err := b.site.Flavor(ctx, 2, 256, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	mover := b.createVM(t, "mover", b.flavor.ID, b.n0)
	keeper := b.createVM(t, "keeper", b.flavor.ID, b.n0)
	if err := b.do(t, `mutation($in: CreateVolumeInput!) { createVolume(input: $in) { id } }`, map[string]any{"in": map[string]any{
		"name": "keeper-data", "sizeGB": 1, "tenantID": gqltest.ID(b.site.Tenant), "virtualMachineID": gqltest.ID(keeper)}}, nil); err != nil {
		t.Fatal(err)
	}
	eventuallyWithin(t, 60*time.Second, "the keeper's volume created", func() bool {
		return c.Volume.Query().Where(volume.HasVirtualMachineWith(virtualmachine.ID(keeper)),
			volume.StatusIn(volume.StatusAttached, volume.StatusAttaching), volume.HasNode()).ExistX(ctx)
	})

	began := time.Now()
	var rep struct {
		DrainNode struct {
			Node struct {
				DrainState     string
				DrainUnmovable []struct{ VMID, VMName, Reason string }
			}
			Moving []struct{ ID, Status string }
		}
	}
	if err := b.do(t, `mutation($id: ID!) { drainNode(id: $id, timeoutSeconds: 3600) {
		node { drainState drainUnmovable { vmID vmName reason } } moving { id status } } }`,
		map[string]any{"id": gqltest.ID(b.n0)}, &rep); err != nil {
		t.Fatal(err)
	}
	d := rep.DrainNode
	if len(d.Node.DrainUnmovable) != 1 || d.Node.DrainUnmovable[0].VMName != "keeper" || !strings.Contains(d.Node.DrainUnmovable[0].Reason, "volume") {
		t.Fatalf("drainUnmovable %+v; want keeper, because of its volume", d.Node.DrainUnmovable)
	}
	if len(d.Moving) != 1 || d.Moving[0].Status != "MOVING" {
		t.Fatalf("moving %+v; want the mover, reading MOVING", d.Moving)
	}
	eventuallyWithin(t, 60*time.Second, "the drain FAILED (only the unmovable VM left)", func() bool {
		n := c.ComputeNode.GetX(ctx, b.n0)
		return n.DrainState != nil && *n.DrainState == computenode.DrainStateFailed
	})
	took := time.Since(began)
	n := c.ComputeNode.GetX(ctx, b.n0)
	if !strings.Contains(n.DrainMessage, "keeper") || strings.Contains(n.DrainMessage, "timed out") {
		t.Errorf("drainMessage %q; want it to name keeper as unmovable, without a timeout", n.DrainMessage)
	}
	b.waitStatus(t, mover, virtualmachine.StatusActive, b.n1)
	t.Logf("drain of 1 movable VM (+1 unmovable listed up front): FAILED (nothing left to wait for) after %s, deadline 1 h", took.Round(time.Millisecond))
	got := c.VirtualMachine.Query().Where(virtualmachine.ID(mover)).WithAvailabilityZone().OnlyX(ctx)
	if got.Edges.AvailabilityZone == nil || got.Edges.AvailabilityZone.ID != b.zones[1] {
		t.Fatalf("after the drain the VM's zone is %v, want node 1's (%d)", got.Edges.AvailabilityZone, b.zones[1])
	}
	b.assignments(t, mover)

	// A resize afterwards fits on the VM's new node: it stays there.
	b.power(t, "stop", mover)
	b.waitStatus(t, mover, virtualmachine.StatusStopped, b.n1)
	status, err := b.resize(mover, f2.ID)
	if err != nil {
		t.Fatalf("resize after the drain: %v", err)
	}
	if status != "STOPPED" {
		t.Errorf("resize in place reads %s, want STOPPED", status)
	}
	if !c.VirtualMachine.Query().Where(virtualmachine.ID(mover), virtualmachine.HasNodeWith(computenode.ID(b.n1))).ExistX(ctx) {
		t.Errorf("the resize moved the VM off node 1, which had room")
	}
}
