package graph_test

import (
	"strings"
	"testing"

	"github.com/virtflow/virtflow/ent/network"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// TestResizeVirtualMachine: resizeVirtualMachine through the API changes a stopped VM's
// flavor, increments revision, keeps the old spec in revisionHistory, and refuses a running
// VM with VALIDATION on id.
func TestResizeVirtualMachine(t *testing.T) {
	env, f := newEnv(t)
	s := site(t, env)
	small, big := flavorOf(f), flavorOf(f, map[string]any{"vcpus": 4, "memoryMB": 4096})
	az := env.Client.AvailabilityZone.Create().SetName(uniq("az")).SetRegionID(s.Region).SaveX(gqltest.System())
	for _, n := range s.Nodes {
		env.Client.ComputeNode.UpdateOneID(n.ID).SetAvailabilityZoneID(az.ID).ExecX(gqltest.System())
	}
	vm := createVM(t, env, vmIn(s, small, map[string]any{"availabilityZoneID": gqltest.ID(az.ID)}))
	const resize = `mutation($id: ID!, $f: ID!) { resizeVirtualMachine(id: $id, flavorID: $f) {
		id revision statusReason flavor { id } availabilityZone { name }
		revisionHistory { revision flavorID flavorName vcpus memoryMB diskGB createdAt } } }`
	vars := map[string]any{"id": vm.ID, "f": big}
	env.Do(t, resize, vars).ExpectError(t, "VALIDATION", "id")

	env.Client.VirtualMachine.UpdateOneID(atoi(t, vm.ID)).SetStatus(virtualmachine.StatusStopped).ExecX(gqltest.System())
	var out struct {
		ResizeVirtualMachine struct {
			ID               string
			Revision         int
			StatusReason     string
			Flavor           struct{ ID string }
			AvailabilityZone struct{ Name string }
			RevisionHistory  []struct {
				Revision int
				FlavorID string
				Vcpus    int
			}
		}
	}
	env.MustDo(t, resize, vars, &out)
	r := out.ResizeVirtualMachine
	if r.Revision != 2 || r.Flavor.ID != big || len(r.RevisionHistory) != 1 || r.RevisionHistory[0].FlavorID != small ||
		r.RevisionHistory[0].Vcpus != 2 || r.AvailabilityZone.Name != az.Name {
		t.Fatalf("resized VM %+v", r)
	}
	if strings.Contains(r.StatusReason, vm.Node.Name) {
		t.Errorf("reason %q names the node", r.StatusReason)
	}
	if n := env.Client.ComputeNode.GetX(gqltest.System(), atoi(t, vm.Node.ID)); n.CPUAllocated != 4 {
		t.Errorf("node allocates %d vCPUs, want 4", n.CPUAllocated)
	}
}

// TestServiceLoadBalancerLifecycle: createRegionService(loadBalanced: true) creates the load
// balancer and its VIP, which say load balancing is not realized yet; deleting the last
// replica deletes the service, the load balancer and the VIP.
func TestServiceLoadBalancerLifecycle(t *testing.T) {
	env, f := newEnv(t)
	s := site(t, env)
	flavor := flavorOf(f)
	env.Client.Network.Create().SetName(uniq("svcnet")).SetCidr("10.88.0.0/24").SetVrf(uniq("vrf")).SetPurpose(network.PurposeService).
		SetDatacenterID(s.Datacenter).ExecX(gqltest.System())
	var out struct {
		CreateRegionService struct {
			ID           string
			LoadBalancer struct {
				ID           string
				Status       string
				StatusReason string
				Vip          struct{ ID, Address string }
			}
			VirtualMachines struct {
				Edges []struct{ Node struct{ ID string } }
			}
		}
	}
	env.MustDo(t, `mutation($in: CreateRegionServiceInput!) { createRegionService(input: $in) {
		id loadBalancer { id status statusReason vip { id address } } virtualMachines { edges { node { id } } } } }`,
		map[string]any{"in": svcIn(s, flavor, 1, nil, map[string]any{"loadBalanced": true})}, &out)
	svc := out.CreateRegionService
	if lb := svc.LoadBalancer; lb.Status != "NOT_REALIZED" || lb.Vip.Address != "10.88.0.1" ||
		!strings.Contains(lb.StatusReason, "not realized") {
		t.Fatalf("load balancer %+v", lb)
	}
	if len(svc.VirtualMachines.Edges) != 1 {
		t.Fatalf("replicas %+v", svc.VirtualMachines.Edges)
	}
	var del struct{ DeleteVirtualMachine string }
	env.MustDo(t, `mutation($id: ID!) { deleteVirtualMachine(id: $id) }`,
		map[string]any{"id": svc.VirtualMachines.Edges[0].Node.ID}, &del)
	for what, id := range map[string]string{"service": svc.ID, "load balancer": svc.LoadBalancer.ID, "VIP": svc.LoadBalancer.Vip.ID} {
		if r := env.Do(t, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": id}); len(r.Errors) == 0 {
			t.Errorf("%s %s left after its last replica was deleted: %s", what, id, r.Data)
		} else {
			r.ExpectError(t, "NOT_FOUND", "")
		}
	}
}
