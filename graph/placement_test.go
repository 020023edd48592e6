package graph_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/identity"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent/apitoken"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/regionservice"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// Placement through the GraphQL API on PostgreSQL: every policy of SPEC.md §4, region
// services, explainPlacement, quotas. The sites are built directly in the database
// (placementtest); everything placed goes through createVirtualMachine, createRegionService,
// scaleRegionService and the deletes.

// placedVM is a VM as createVirtualMachine answers it.
type placedVM struct {
	ID           string            `json:"id"`
	Name         string            `json:"name"`
	Status       string            `json:"status"`
	StatusReason string            `json:"statusReason"`
	Labels       map[string]string `json:"labels"`
	Node         struct{ ID, Name string }
	Cluster      struct{ ID, Name string }
}

const vmFields = `id name status statusReason labels node { id name } cluster { id name }`

// site builds a placement test bed: 4 racks of 2 hosts (16 vCPUs, 64 GiB, 1 TB, 8 cores of
// 2 threads), rack i in power zone i%2 and network zone i/2 — so racks 0..3 are
// (pz0,nz0) (pz1,nz0) (pz0,nz1) (pz1,nz1) — nodes labelled tier gold (even) or silver (odd)
// and idx n.
func site(t *testing.T, env *gqltest.Env) *placementtest.Site {
	t.Helper()
	s, err := placementtest.Build(gqltest.System(), env.Client, placementtest.Spec{
		Racks: 4, HostsPerRack: 2, PowerZones: 2, NetworkZones: 2,
		CPU: 16, MemoryMB: 65536, DiskGB: 1000, Cores: 8,
		Labels: func(n int) fieldtype.Labels {
			tier := "gold"
			if n%2 == 1 {
				tier = "silver"
			}
			return fieldtype.Labels{"tier": tier, "idx": fmt.Sprint(n)}
		},
	})
	if err != nil {
		t.Fatalf("build site: %v", err)
	}
	return s
}

// flavorOf creates a flavor through GraphQL (2 vCPUs, 2 GiB, 20 GB unless extra says).
func flavorOf(f *fx, extra ...map[string]any) string {
	return f.Flavor(input(map[string]any{"vcpus": 2, "memoryMB": 2048, "diskGB": 20}, extra))
}

// vmIn is a createVirtualMachine input in the site.
func vmIn(s *placementtest.Site, flavor string, extra ...map[string]any) map[string]any {
	return input(map[string]any{"name": uniq("vm"), "tenantID": gqltest.ID(s.Tenant), "regionID": gqltest.ID(s.Region),
		"flavorID": flavor}, extra)
}

func createVM(t testing.TB, env *gqltest.Env, in map[string]any) placedVM {
	t.Helper()
	var out struct{ CreateVirtualMachine placedVM }
	env.MustDo(t, `mutation($in: CreateVirtualMachineInput!) { createVirtualMachine(input: $in) { `+vmFields+` } }`,
		map[string]any{"in": in}, &out)
	return out.CreateVirtualMachine
}

func tryVM(t testing.TB, env *gqltest.Env, in map[string]any) gqltest.Response {
	t.Helper()
	return env.Do(t, `mutation($in: CreateVirtualMachineInput!) { createVirtualMachine(input: $in) { id } }`, map[string]any{"in": in})
}

// service is a region service as the mutations answer it.
type service struct {
	ID              string `json:"id"`
	Name            string `json:"name"`
	Replicas        int    `json:"replicas"`
	StatusReason    string `json:"statusReason"`
	VirtualMachines struct {
		TotalCount int `json:"totalCount"`
		Edges      []struct{ Node placedVM }
	} `json:"virtualMachines"`
}

const serviceFields = `id name replicas statusReason virtualMachines(orderBy: {field: NAME}) { totalCount edges { node { ` + vmFields + ` } } }`

func (s service) vms() []placedVM {
	out := make([]placedVM, len(s.VirtualMachines.Edges))
	for i, e := range s.VirtualMachines.Edges {
		out[i] = e.Node
	}
	return out
}

func createService(t testing.TB, env *gqltest.Env, in map[string]any) service {
	t.Helper()
	var out struct{ CreateRegionService service }
	env.MustDo(t, `mutation($in: CreateRegionServiceInput!) { createRegionService(input: $in) { `+serviceFields+` } }`,
		map[string]any{"in": in}, &out)
	return out.CreateRegionService
}

func tryService(t testing.TB, env *gqltest.Env, in map[string]any) gqltest.Response {
	t.Helper()
	return env.Do(t, `mutation($in: CreateRegionServiceInput!) { createRegionService(input: $in) { id } }`, map[string]any{"in": in})
}

func scale(t testing.TB, env *gqltest.Env, id string, replicas int) gqltest.Response {
	t.Helper()
	return env.Do(t, `mutation($id: ID!, $n: Int!) { scaleRegionService(id: $id, replicas: $n) { `+serviceFields+` } }`,
		map[string]any{"id": id, "n": replicas})
}

func readService(t testing.TB, env *gqltest.Env, id string) service {
	t.Helper()
	var out struct{ Node service }
	env.MustDo(t, `query($id: ID!) { node(id: $id) { ... on RegionService { `+serviceFields+` } } }`, map[string]any{"id": id}, &out)
	return out.Node
}

// svcIn is a createRegionService input in the site.
func svcIn(s *placementtest.Site, flavor string, replicas int, policy map[string]any, extra ...map[string]any) map[string]any {
	in := map[string]any{"name": uniq("svc"), "tenantID": gqltest.ID(s.Tenant), "regionID": gqltest.ID(s.Region),
		"flavorID": flavor, "replicas": replicas}
	if policy != nil {
		in["schedulePolicy"] = policy
	}
	return input(in, extra)
}

func zones(kind, mode, zone string) map[string]any {
	z := map[string]any{"kind": kind, "mode": mode}
	if zone != "" {
		z["zone"] = zone
	}
	return map[string]any{"zones": []any{z}}
}

// nodeOf finds a site node by GraphQL id.
func nodeOf(t testing.TB, s *placementtest.Site, id string) placementtest.Node {
	t.Helper()
	for _, n := range s.Nodes {
		if gqltest.ID(n.ID) == id {
			return n
		}
	}
	t.Fatalf("node %s is not in the site", id)
	return placementtest.Node{}
}

// books fails the test when a node's allocation or a quota's usage disagrees with the VMs.
func books(t testing.TB, s *placementtest.Site) {
	t.Helper()
	vs, err := s.Check(gqltest.System())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		t.Error(v)
	}
}

// reasons returns extensions.reasons of an error.
func reasons(e gqltest.Error) map[string]any {
	r, _ := e.Extensions["reasons"].(map[string]any)
	return r
}

func TestPlacementPolicies(t *testing.T) {
	env, f := newEnv(t)
	flavor := flavorOf(f)

	t.Run("rack anti-affinity across a region service, and no fifth rack", func(t *testing.T) {
		s := site(t, env)
		svc := createService(t, env, svcIn(s, flavor, 4, zones("RACK", "ANTI_AFFINITY", "")))
		racks := map[int]bool{}
		for _, vm := range svc.vms() {
			racks[nodeOf(t, s, vm.Node.ID).Rack] = true
		}
		if svc.Replicas != 4 || len(svc.vms()) != 4 || len(racks) != 4 {
			t.Fatalf("replicas %d, %d VMs in %d racks; want 4 in 4", svc.Replicas, len(svc.vms()), len(racks))
		}
		e := scale(t, env, svc.ID, 5).ExpectError(t, "NO_CAPACITY", "")
		if reasons(e)["ZonePolicy"] != float64(8) {
			t.Errorf("reasons %v, want ZonePolicy: 8", reasons(e))
		}
		if got := readService(t, env, svc.ID); got.Replicas != 4 || got.VirtualMachines.TotalCount != 4 {
			t.Errorf("after a failed scale: replicas %d, %d VMs; want 4, 4", got.Replicas, got.VirtualMachines.TotalCount)
		}
		books(t, s)
	})

	t.Run("named power zone affinity", func(t *testing.T) {
		s := site(t, env)
		for range 3 {
			vm := createVM(t, env, vmIn(s, flavor, map[string]any{"schedulePolicy": zones("POWER", "AFFINITY", s.PowerZones[1])}))
			if r := s.Racks[nodeOf(t, s, vm.Node.ID).Rack]; r.PowerZone != s.PowerZones[1] {
				t.Errorf("VM on %s in power zone %s, want %s", vm.Node.Name, r.PowerZone, s.PowerZones[1])
			}
		}
		r := tryVM(t, env, vmIn(s, flavor, map[string]any{"schedulePolicy": zones("POWER", "AFFINITY", "no-such-zone")}))
		r.ExpectError(t, "NO_CAPACITY", "")
	})

	t.Run("power zone anti-affinity", func(t *testing.T) {
		s := site(t, env)
		svc := createService(t, env, svcIn(s, flavor, 2, zones("POWER", "ANTI_AFFINITY", "")))
		vms := svc.vms()
		if len(vms) != 2 || s.Racks[nodeOf(t, s, vms[0].Node.ID).Rack].PowerZone == s.Racks[nodeOf(t, s, vms[1].Node.ID).Rack].PowerZone {
			t.Fatalf("2 replicas should be in the 2 power zones: %+v", vms)
		}
		scale(t, env, svc.ID, 3).ExpectError(t, "NO_CAPACITY", "")
	})

	t.Run("network zone affinity holds across a scale-up", func(t *testing.T) {
		s := site(t, env)
		svc := createService(t, env, svcIn(s, flavor, 3, zones("NETWORK", "AFFINITY", "")))
		var got service
		env.MustDo(t, `mutation($id: ID!) { scaleRegionService(id: $id, replicas: 6) { `+serviceFields+` } }`,
			map[string]any{"id": svc.ID}, &struct{ ScaleRegionService *service }{&got})
		nzs := map[string]bool{}
		for _, vm := range got.vms() {
			nzs[s.Racks[nodeOf(t, s, vm.Node.ID).Rack].NetworkZone] = true
		}
		if got.Replicas != 6 || len(got.vms()) != 6 || len(nzs) != 1 {
			t.Errorf("replicas %d, %d VMs in network zones %v; want 6 in one", got.Replicas, len(got.vms()), nzs)
		}
		books(t, s)
	})

	t.Run("network zone anti-affinity", func(t *testing.T) {
		s := site(t, env)
		vms := createService(t, env, svcIn(s, flavor, 2, zones("NETWORK", "ANTI_AFFINITY", ""))).vms()
		if len(vms) != 2 || s.Racks[nodeOf(t, s, vms[0].Node.ID).Rack].NetworkZone == s.Racks[nodeOf(t, s, vms[1].Node.ID).Rack].NetworkZone {
			t.Errorf("2 replicas should be in the 2 network zones: %+v", vms)
		}
	})

	t.Run("rack affinity", func(t *testing.T) {
		s := site(t, env)
		vms := createService(t, env, svcIn(s, flavor, 5, zones("RACK", "AFFINITY", ""))).vms()
		racks := map[int]bool{}
		for _, vm := range vms {
			racks[nodeOf(t, s, vm.Node.ID).Rack] = true
		}
		if len(vms) != 5 || len(racks) != 1 {
			t.Errorf("5 replicas in racks %v, want one rack", racks)
		}
	})

	t.Run("hard label affinity and anti-affinity", func(t *testing.T) {
		s := site(t, env)
		labelOf := func(vm placedVM) string {
			n := env.Client.ComputeNode.GetX(gqltest.System(), atoi(t, vm.Node.ID))
			return n.Labels["tier"]
		}
		for range 3 {
			if tier := labelOf(createVM(t, env, vmIn(s, flavor, map[string]any{"schedulePolicy": map[string]any{
				"nodeLabelHardAffinities": map[string]any{"tier": "silver"}}}))); tier != "silver" {
				t.Errorf("hard affinity tier=silver placed on a %s node", tier)
			}
			if tier := labelOf(createVM(t, env, vmIn(s, flavor, map[string]any{"schedulePolicy": map[string]any{
				"nodeLabelHardExclusions": map[string]any{"tier": "silver"}}}))); tier != "gold" {
				t.Errorf("hard exclusion tier=silver placed on a %s node", tier)
			}
		}
		e := tryVM(t, env, vmIn(s, flavor, map[string]any{"schedulePolicy": map[string]any{
			"nodeLabelHardAffinities": map[string]any{"tier": "bronze"}}})).ExpectError(t, "NO_CAPACITY", "")
		if reasons(e)["NodeLabelHardAffinity"] != float64(8) {
			t.Errorf("reasons %v, want NodeLabelHardAffinity: 8", reasons(e))
		}
		// Anti-affinity spreads by the key: two replicas on two tiers, a third has none left.
		spread := map[string]any{"nodeLabelHardAntiAffinities": map[string]any{"tier": ""}}
		svc := createService(t, env, svcIn(s, flavor, 2, spread))
		tiers := map[string]bool{}
		for _, vm := range svc.vms() {
			tiers[labelOf(vm)] = true
		}
		if len(tiers) != 2 {
			t.Errorf("hard anti-affinity by tier: replicas on tiers %v, want gold and silver", tiers)
		}
		e = scale(t, env, svc.ID, 3).ExpectError(t, "NO_CAPACITY", "")
		if reasons(e)["NodeLabelHardAntiAffinity"] != float64(8) {
			t.Errorf("third replica over two tiers: reasons %v, want NodeLabelHardAntiAffinity: 8", reasons(e))
		}
	})

	t.Run("soft label affinity and anti-affinity", func(t *testing.T) {
		s := site(t, env)
		vm := createVM(t, env, vmIn(s, flavor, map[string]any{"schedulePolicy": map[string]any{
			"nodeLabelSoftAffinities": map[string]any{"idx": "5"}}}))
		if vm.Node.Name != s.Nodes[5].Name {
			t.Errorf("soft affinity idx=5 placed on %s, want %s", vm.Node.Name, s.Nodes[5].Name)
		}
		for range 4 {
			vm := createVM(t, env, vmIn(s, flavor, map[string]any{"schedulePolicy": map[string]any{
				"nodeLabelSoftExclusions": map[string]any{"tier": "gold"}}}))
			if n := nodeOf(t, s, vm.Node.ID); slices.Index(s.Nodes, n)%2 == 0 {
				t.Errorf("soft exclusion tier=gold placed on gold node %s while silver ones have room", vm.Node.Name)
			}
		}
	})

	t.Run("node names", func(t *testing.T) {
		s := site(t, env)
		for range 2 {
			vm := createVM(t, env, vmIn(s, flavor, map[string]any{"schedulePolicy": map[string]any{"nodeNames": []string{s.Nodes[6].Name}}}))
			if vm.Node.Name != s.Nodes[6].Name {
				t.Errorf("placed on %s, want %s", vm.Node.Name, s.Nodes[6].Name)
			}
		}
	})

	t.Run("cluster weight, names and labels", func(t *testing.T) {
		s := site(t, env)
		ctx := gqltest.System()
		heavy, err := s.AddCluster(ctx, "heavy", 200, fieldtype.Labels{"env": "prod"})
		if err != nil {
			t.Fatal(err)
		}
		light, err := s.AddCluster(ctx, "light", 50, fieldtype.Labels{"env": "dev"})
		if err != nil {
			t.Fatal(err)
		}
		spec := placementtest.Spec{Racks: 1, HostsPerRack: 1, CPU: 16, MemoryMB: 65536, DiskGB: 1000, Cores: 8}
		for _, cl := range []int{heavy, light} {
			if _, err := s.AddNodes(ctx, cl, spec); err != nil {
				t.Fatal(err)
			}
		}
		for _, tc := range []struct {
			policy map[string]any
			want   int
		}{
			{nil, heavy},
			{map[string]any{"clusterNames": []string{s.Prefix + "-a"}}, s.Cluster},
			{map[string]any{"clusterLabels": map[string]any{"env": "dev"}}, light},
		} {
			in := vmIn(s, flavor)
			if tc.policy != nil {
				in["schedulePolicy"] = tc.policy
			}
			if vm := createVM(t, env, in); vm.Cluster.ID != gqltest.ID(tc.want) {
				t.Errorf("policy %v: cluster %s, want %d", tc.policy, vm.Cluster.Name, tc.want)
			}
		}
		e := tryVM(t, env, vmIn(s, flavor, map[string]any{"schedulePolicy": map[string]any{
			"clusterLabels": map[string]any{"env": "none"}}})).ExpectError(t, "NO_CAPACITY", "")
		if reasons(e)["Cluster"] != float64(3) {
			t.Errorf("reasons %v, want Cluster: 3", reasons(e))
		}
	})

	t.Run("dedicated CPUs take whole free cores", func(t *testing.T) {
		s := site(t, env)
		// Every node has 5 vCPUs free: 2 whole cores of 2 threads.
		env.Client.ComputeNode.Update().Where(computenode.IDIn(nodeIDs(s)...)).SetCPUAllocated(11).ExecX(gqltest.System())
		ded5 := flavorOf(f, map[string]any{"vcpus": 5, "cpuPolicy": "DEDICATED"})
		e := tryVM(t, env, vmIn(s, ded5)).ExpectError(t, "NO_CAPACITY", "")
		if reasons(e)["CPUFit"] != float64(8) {
			t.Errorf("reasons %v, want CPUFit: 8", reasons(e))
		}
		createVM(t, env, vmIn(s, flavorOf(f, map[string]any{"vcpus": 4, "cpuPolicy": "DEDICATED"})))
		createVM(t, env, vmIn(s, flavorOf(f, map[string]any{"vcpus": 5})))
	})

	t.Run("spread over the emptiest nodes", func(t *testing.T) {
		s := site(t, env)
		nodes := map[string]bool{}
		for range 8 {
			nodes[createVM(t, env, vmIn(s, flavor)).Node.ID] = true
		}
		if len(nodes) != 8 {
			t.Errorf("8 VMs on %d nodes; the default spreads them over all 8", len(nodes))
		}
		books(t, s)
	})

	t.Run("provider of the flavor", func(t *testing.T) {
		s := site(t, env)
		withProvider := flavorOf(f, map[string]any{"providerID": f.Provider()})
		e := tryVM(t, env, vmIn(s, withProvider)).ExpectError(t, "NO_CAPACITY", "")
		if reasons(e)["Provider"] != float64(8) {
			t.Errorf("reasons %v, want Provider: 8", reasons(e))
		}
	})
}

func nodeIDs(s *placementtest.Site) []int {
	ids := make([]int, len(s.Nodes))
	for i, n := range s.Nodes {
		ids[i] = n.ID
	}
	return ids
}

func TestCreateVirtualMachinePlaces(t *testing.T) {
	env, f := newEnv(t)
	s := site(t, env)
	flavor := flavorOf(f)
	vm := createVM(t, env, vmIn(s, flavor))
	if vm.Status != "INITIALIZING" || vm.Node.ID == "" || vm.Cluster.ID != gqltest.ID(s.Cluster) ||
		vm.StatusReason != "placed; waiting to be provisioned" || strings.Contains(vm.StatusReason, vm.Node.Name) {
		t.Errorf("createVirtualMachine answered %+v; want INITIALIZING, placed on a node of cluster %d, a reason not naming it", vm, s.Cluster)
	}
	books(t, s)

	// Placement edges are not inputs, and tenant, region and flavor cannot change.
	for _, field := range []string{"nodeID", "clusterID", "regionServiceID"} {
		r := tryVM(t, env, vmIn(s, flavor, map[string]any{field: vm.Node.ID}))
		r.ExpectError(t, "GRAPHQL_VALIDATION_FAILED", "")
	}
	for _, field := range []string{"tenantID", "regionID", "flavorID"} {
		f.tryUpdate("VirtualMachine", vm.ID, map[string]any{field: flavor}).ExpectError(t, "GRAPHQL_VALIDATION_FAILED", "")
	}

	// A region without clusters: NO_CAPACITY, and nothing is left behind.
	name := uniq("vm")
	r := tryVM(t, env, map[string]any{"name": name, "tenantID": gqltest.ID(s.Tenant), "regionID": f.Region(), "flavorID": flavor})
	r.ExpectError(t, "NO_CAPACITY", "")
	if n := env.Client.VirtualMachine.Query().Where(virtualmachine.Name(name)).CountX(gqltest.System()); n != 0 {
		t.Errorf("a VM that fits nowhere was created")
	}
	// A disabled flavor takes no new VMs.
	f.tryCreate("VirtualMachine", vmIn(s, flavorOf(f, map[string]any{"disabled": true}))).ExpectError(t, "VALIDATION", "flavorID")

	// Two placements in one mutation share its transaction: both or neither.
	two := `mutation($a: CreateVirtualMachineInput!, $b: CreateVirtualMachineInput!) {
		a: createVirtualMachine(input: $a) { id } b: createVirtualMachine(input: $b) { id } }`
	env.MustDo(t, two, map[string]any{"a": vmIn(s, flavor), "b": vmIn(s, flavor)}, nil)
	books(t, s)
	nameA := uniq("vm")
	r = env.Do(t, two, map[string]any{"a": vmIn(s, flavor, map[string]any{"name": nameA}), "b": vmIn(s, flavorOf(f, map[string]any{"vcpus": 64}))})
	r.ExpectError(t, "NO_CAPACITY", "")
	if n := env.Client.VirtualMachine.Query().Where(virtualmachine.Name(nameA)).CountX(gqltest.System()); n != 0 {
		t.Errorf("the first VM of a failed mutation was kept")
	}
	books(t, s)

	// Deleting frees the allocation.
	var del map[string]string
	env.MustDo(t, `mutation($id: ID!) { deleteVirtualMachine(id: $id) }`, map[string]any{"id": vm.ID}, &del)
	n := env.Client.ComputeNode.GetX(gqltest.System(), atoi(t, vm.Node.ID))
	if n.CPUAllocated != 0 || n.MemoryAllocatedMB != 0 || n.DiskAllocatedGB != 0 {
		t.Errorf("node keeps %d/%d/%d after the delete", n.CPUAllocated, n.MemoryAllocatedMB, n.DiskAllocatedGB)
	}
	books(t, s)
}

func TestRegionServiceLifecycle(t *testing.T) {
	env, f := newEnv(t)
	s := site(t, env)
	flavor := flavorOf(f)
	image := f.Image()
	antiRack := zones("RACK", "ANTI_AFFINITY", "")

	svc := createService(t, env, svcIn(s, flavor, 3, antiRack, map[string]any{"imageID": image}))
	vms := svc.vms()
	if len(vms) != 3 {
		t.Fatalf("%d VMs, want 3", len(vms))
	}
	for i, vm := range vms {
		want := fmt.Sprintf("%s-%d", svc.Name, i+1)
		if vm.Name != want || vm.Labels["virtflow.io/region-service"] != svc.Name || vm.Status != "INITIALIZING" || vm.Node.ID == "" {
			t.Errorf("replica %d: %+v; want %s labelled with the service, placed", i+1, vm, want)
		}
	}
	var pol struct {
		Node struct {
			SchedulePolicy struct{ Zones []map[string]any }
			Image          struct{ ID string }
		}
	}
	env.MustDo(t, `query($id: ID!) { node(id: $id) { ... on VirtualMachine { schedulePolicy { zones { kind mode } } image { id } } } }`,
		map[string]any{"id": vms[0].ID}, &pol)
	if len(pol.Node.SchedulePolicy.Zones) != 1 || pol.Node.SchedulePolicy.Zones[0]["kind"] != "RACK" || pol.Node.Image.ID != image {
		t.Errorf("replica policy %+v, image %s; want the service's", pol.Node.SchedulePolicy, pol.Node.Image.ID)
	}
	books(t, s)

	// Up: the new replica goes to the one rack left; beyond that, NO_CAPACITY.
	var up struct{ ScaleRegionService service }
	env.MustDo(t, `mutation($id: ID!) { scaleRegionService(id: $id, replicas: 4) { `+serviceFields+` } }`, map[string]any{"id": svc.ID}, &up)
	racks := map[int]string{}
	for _, vm := range up.ScaleRegionService.vms() {
		rack := nodeOf(t, s, vm.Node.ID).Rack
		if other, dup := racks[rack]; dup {
			t.Errorf("%s and %s share rack %d", other, vm.Name, rack)
		}
		racks[rack] = vm.Name
	}
	if up.ScaleRegionService.Replicas != 4 || len(racks) != 4 {
		t.Errorf("after scaling to 4: replicas %d in %d racks", up.ScaleRegionService.Replicas, len(racks))
	}
	scale(t, env, svc.ID, 5).ExpectError(t, "NO_CAPACITY", "")
	scale(t, env, svc.ID, -1).ExpectError(t, "VALIDATION", "replicas")
	// What placement decided cannot be changed by an update.
	for _, field := range []string{"tenantID", "regionID", "flavorID", "replicas"} {
		f.tryUpdate("RegionService", svc.ID, map[string]any{field: flavor}).ExpectError(t, "GRAPHQL_VALIDATION_FAILED", "")
	}

	// Down: the highest-numbered go, and what they held is freed.
	var down struct{ ScaleRegionService service }
	env.MustDo(t, `mutation($id: ID!) { scaleRegionService(id: $id, replicas: 2) { `+serviceFields+` } }`, map[string]any{"id": svc.ID}, &down)
	var names []string
	for _, vm := range down.ScaleRegionService.vms() {
		names = append(names, vm.Name)
	}
	if want := []string{svc.Name + "-1", svc.Name + "-2"}; !slices.Equal(names, want) || down.ScaleRegionService.Replicas != 2 {
		t.Errorf("after scaling to 2: replicas %d, VMs %v; want %v", down.ScaleRegionService.Replicas, names, want)
	}
	books(t, s)

	// Up again: numbering goes on after the highest, and the group still avoids racks.
	env.MustDo(t, `mutation($id: ID!) { scaleRegionService(id: $id, replicas: 3) { `+serviceFields+` } }`, map[string]any{"id": svc.ID}, &up)
	if vms := up.ScaleRegionService.vms(); len(vms) != 3 || vms[2].Name != svc.Name+"-3" {
		t.Errorf("after scaling to 3 again: %+v", vms)
	}

	// Deleting a replica directly lowers replicas.
	f.env.MustDo(t, `mutation($id: ID!) { deleteVirtualMachine(id: $id) }`, map[string]any{"id": down.ScaleRegionService.vms()[1].ID}, nil)
	if got := readService(t, env, svc.ID); got.Replicas != 2 || got.VirtualMachines.TotalCount != 2 {
		t.Errorf("after deleting a replica: replicas %d, %d VMs; want 2", got.Replicas, got.VirtualMachines.TotalCount)
	}
	books(t, s)

	// Scaling to 0 deletes the service and its VMs.
	r := scale(t, env, svc.ID, 0)
	if len(r.Errors) > 0 || string(r.Data) != `{"scaleRegionService":null}` {
		t.Errorf("scale to 0: %s %s, want null", r.Data, r.ErrorsString())
	}
	f.tryDelete("RegionService", svc.ID).ExpectError(t, "NOT_FOUND", "")
	books(t, s)

	// Partial placement: as many as fit, and replicas says so.
	partial := createService(t, env, svcIn(s, flavor, 6, antiRack, map[string]any{"allowPartial": true}))
	if partial.Replicas != 4 || len(partial.vms()) != 4 || !strings.Contains(partial.StatusReason, "4 of 6") {
		t.Errorf("partial: replicas %d, %d VMs, reason %q; want 4", partial.Replicas, len(partial.vms()), partial.StatusReason)
	}
	// Without it, all or nothing: no service, no VMs.
	name := uniq("svc")
	tryService(t, env, svcIn(s, flavor, 6, antiRack, map[string]any{"name": name})).ExpectError(t, "NO_CAPACITY", "")
	if n := env.Client.RegionService.Query().Where(regionservice.Name(name)).CountX(gqltest.System()); n != 0 {
		t.Errorf("a region service that does not fit was created")
	}
	// Replicas are made by placement only: the input has no field to attach VMs.
	tryService(t, env, svcIn(s, flavor, 1, nil, map[string]any{"virtualMachineIDs": []string{partial.vms()[0].ID}})).
		ExpectError(t, "GRAPHQL_VALIDATION_FAILED", "")
	tryService(t, env, map[string]any{"name": uniq("svc"), "tenantID": gqltest.ID(s.Tenant), "regionID": gqltest.ID(s.Region)}).
		ExpectError(t, "VALIDATION", "flavorID")

	// Deleting the service deletes its VMs and frees them.
	f.env.MustDo(t, `mutation($id: ID!) { deleteRegionService(id: $id) }`, map[string]any{"id": partial.ID}, nil)
	for _, vm := range partial.vms() {
		f.tryDelete("VirtualMachine", vm.ID).ExpectError(t, "NOT_FOUND", "")
	}
	books(t, s)

	// Deleting the last replica deletes the service.
	one := createService(t, env, svcIn(s, flavor, 1, nil))
	f.env.MustDo(t, `mutation($id: ID!) { deleteVirtualMachine(id: $id) }`, map[string]any{"id": one.vms()[0].ID}, nil)
	f.tryDelete("RegionService", one.ID).ExpectError(t, "NOT_FOUND", "")
	books(t, s)
}

// explanation is explainPlacement's answer.
type explanation struct {
	Placeable  bool
	ErrorCode  *string
	Message    *string
	Cluster    *struct{ ID string }
	Placements []struct {
		Node  struct{ ID, Name string }
		Score float64
	}
	Unplaced   int
	Rejections []struct {
		Filter, Code string
		Count        int
	}
	Nodes []struct {
		Node       struct{ ID, Name string }
		RejectedBy *string
		Code       *string
		Scores     []struct {
			Plugin string
			Score  float64
		}
		Total float64
	}
}

const explainQuery = `query($in: PlacementRequestInput!) { explainPlacement(input: $in) {
	placeable errorCode message cluster { id } placements { node { id name } score } unplaced
	rejections { filter code count } nodes { node { id name } rejectedBy code scores { plugin score } total } } }`

func explain(t testing.TB, env *gqltest.Env, in map[string]any) explanation {
	t.Helper()
	var out struct{ ExplainPlacement explanation }
	env.MustDo(t, explainQuery, map[string]any{"in": in}, &out)
	return out.ExplainPlacement
}

func TestExplainPlacement(t *testing.T) {
	env, f := newEnv(t)
	s := site(t, env)
	flavor := flavorOf(f)
	env.Client.ComputeNode.UpdateOneID(s.Nodes[7].ID).SetSchedulable(false).ExecX(gqltest.System())
	base := map[string]any{"tenantID": gqltest.ID(s.Tenant), "regionID": gqltest.ID(s.Region), "flavorID": flavor}

	t.Run("fits", func(t *testing.T) {
		e := explain(t, env, input(base, []map[string]any{{"count": 3, "schedulePolicy": zones("RACK", "ANTI_AFFINITY", "")}}))
		if !e.Placeable || e.ErrorCode != nil || e.Cluster == nil || e.Cluster.ID != gqltest.ID(s.Cluster) || len(e.Placements) != 3 {
			t.Fatalf("explanation %+v; want placeable, 3 placements in the site's cluster", e)
		}
		if len(e.Nodes) != 8 {
			t.Errorf("%d nodes explained, want all 8 of the cluster", len(e.Nodes))
		}
		scored, rejected := 0, map[string]int{}
		for _, n := range e.Nodes {
			if n.RejectedBy == nil {
				scored++
				if len(n.Scores) == 0 || n.Node.Name == "" {
					t.Errorf("scored node without scores or name: %+v", n)
				}
			} else {
				rejected[*n.RejectedBy]++
			}
		}
		// The last round: 2 racks taken (4 nodes), the cordoned node, 3 left to score.
		if scored != 3 || rejected["ZonePolicy"] != 4 || rejected["Schedulable"] != 1 {
			t.Errorf("last round: %d scored, rejected %v; want 3 scored, ZonePolicy 4, Schedulable 1", scored, rejected)
		}
		counts := map[string]int{}
		for _, r := range e.Rejections {
			counts[r.Filter] += r.Count
		}
		if counts["ZonePolicy"] != 4 || counts["Schedulable"] != 1 {
			t.Errorf("rejections %+v", e.Rejections)
		}
	})

	t.Run("fits nowhere", func(t *testing.T) {
		big := flavorOf(f, map[string]any{"vcpus": 32})
		e := explain(t, env, input(base, []map[string]any{{"flavorID": big}}))
		if e.Placeable || e.ErrorCode == nil || *e.ErrorCode != "NO_CAPACITY" || e.Message == nil || len(e.Placements) != 0 {
			t.Fatalf("explanation %+v; want NO_CAPACITY", e)
		}
		if len(e.Nodes) != 8 {
			t.Errorf("%d nodes explained, want 8", len(e.Nodes))
		}
		want := map[[2]string]int{{"CPUFit", "INSUFFICIENT_CPU"}: 7}
		for _, r := range e.Rejections {
			if r.Filter == "Schedulable" {
				continue
			}
			if want[[2]string{r.Filter, r.Code}] != r.Count {
				t.Errorf("rejection %+v, want %v", r, want)
			}
		}
		for _, n := range e.Nodes {
			if n.RejectedBy == nil || n.Code == nil {
				t.Errorf("node %s not explained as rejected", n.Node.Name)
			}
		}
	})

	t.Run("quota", func(t *testing.T) {
		hg := gqltest.ID(s.HostGroup)
		env.MustDo(t, `mutation($in: SetQuotaInput!) { setQuota(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"tenantID": gqltest.ID(s.Tenant), "hostGroupID": hg, "vcpus": 2}}, nil)
		t.Cleanup(func() {
			env.MustDo(t, `mutation($in: SetQuotaInput!) { setQuota(input: $in) { id } }`,
				map[string]any{"in": map[string]any{"tenantID": gqltest.ID(s.Tenant), "hostGroupID": hg, "vcpus": 0}}, nil)
		})
		e := explain(t, env, input(base, []map[string]any{{"count": 2}}))
		if e.Placeable || e.ErrorCode == nil || *e.ErrorCode != "QUOTA_EXCEEDED" {
			t.Errorf("explanation %+v; want QUOTA_EXCEEDED", e)
		}
	})

	t.Run("a scale-up counts the running replicas", func(t *testing.T) {
		svc := createService(t, env, svcIn(s, flavor, 3, zones("RACK", "ANTI_AFFINITY", "")))
		in := input(base, []map[string]any{{"regionServiceID": svc.ID, "count": 2, "schedulePolicy": zones("RACK", "ANTI_AFFINITY", "")}})
		if e := explain(t, env, in); e.Placeable {
			t.Errorf("2 more replicas do not fit in the one rack left: %+v", e)
		}
		in["count"] = 1
		e := explain(t, env, in)
		if !e.Placeable || len(e.Placements) != 1 {
			t.Fatalf("1 more replica fits: %+v", e)
		}
		free := nodeOf(t, s, e.Placements[0].Node.ID).Rack
		for _, vm := range svc.vms() {
			if nodeOf(t, s, vm.Node.ID).Rack == free {
				t.Errorf("explained placement in rack %d, which holds %s", free, vm.Name)
			}
		}
	})

	env.Do(t, explainQuery, map[string]any{"in": input(base, []map[string]any{{"schedulePolicy": zones("RACK", "ANTI_AFFINITY", "x")}})}).
		ExpectError(t, "VALIDATION", "schedulePolicy")

	// Explaining writes nothing.
	before := env.Client.ComputeNode.Query().Where(computenode.IDIn(nodeIDs(s)...)).AllX(gqltest.System())
	explain(t, env, input(base, []map[string]any{{"count": 4}}))
	after := env.Client.ComputeNode.Query().Where(computenode.IDIn(nodeIDs(s)...)).AllX(gqltest.System())
	for i := range before {
		if before[i].CPUAllocated != after[i].CPUAllocated {
			t.Errorf("explainPlacement changed node %s", before[i].Name)
		}
	}
	books(t, s)

	// Tenants may not see the compute fabric: the cluster, placements and nodes stay empty
	// even when asked for; the verdict, the message and the rejection counts match the
	// operator's answer.
	member := memberToken(t, env, s.Tenant)
	var full struct{ ExplainPlacement explanation }
	env.As(member).MustDo(t, explainQuery, map[string]any{"in": base}, &full)
	if e := full.ExplainPlacement; !e.Placeable || e.Cluster != nil || len(e.Placements) != 0 || len(e.Nodes) != 0 {
		t.Errorf("tenant asking for the fabric got %+v; want placeable with no cluster, placements or nodes", e)
	}
	const tenantQuery = `query($in: PlacementRequestInput!) { explainPlacement(input: $in) {
		placeable errorCode message unplaced rejections { filter code count } } }`
	for _, in := range []map[string]any{
		input(base, []map[string]any{{"count": 3, "schedulePolicy": zones("RACK", "ANTI_AFFINITY", "")}}),
		input(base, []map[string]any{{"count": 9, "schedulePolicy": zones("RACK", "ANTI_AFFINITY", "")}}),
	} {
		want := explain(t, env, in)
		var got struct{ ExplainPlacement explanation }
		env.As(member).MustDo(t, tenantQuery, map[string]any{"in": in}, &got)
		e := got.ExplainPlacement
		deref := func(p *string) string {
			if p == nil {
				return "<null>"
			}
			return *p
		}
		if e.Placeable != want.Placeable || deref(e.ErrorCode) != deref(want.ErrorCode) || deref(e.Message) != deref(want.Message) ||
			e.Unplaced != want.Unplaced || fmt.Sprint(e.Rejections) != fmt.Sprint(want.Rejections) || len(e.Rejections) == 0 {
			t.Errorf("count %v: tenant's explanation %+v, operator's %+v", in["count"], e, want)
		}
	}
	other := env.Client.Tenant.Create().SetName(uniq("other")).SaveX(gqltest.System()).ID
	env.As(member).Do(t, tenantQuery, map[string]any{"in": input(base, []map[string]any{{"tenantID": gqltest.ID(other)}})}).
		ExpectError(t, "NOT_FOUND", "")
}

// memberToken makes a user who is a member of tenant and returns an API token of theirs.
func memberToken(t testing.TB, env *gqltest.Env, tenant int) string {
	t.Helper()
	ctx := gqltest.System()
	u := env.Client.User.Create().SetUsername(uniq("member")).AddTenantIDs(tenant).SaveX(ctx)
	if _, err := env.Identity.GrantRole(ctx, u.ID, authz.RoleTenantMember, &tenant, nil); err != nil {
		t.Fatal(err)
	}
	plain, hash, prefix := identity.NewToken(apitoken.KindApi)
	env.Client.APIToken.Create().SetName(uniq("token")).SetTokenHash(hash).SetPrefix(prefix).
		SetKind(apitoken.KindApi).SetScope(apitoken.ScopeReadWrite).SetOwnerID(u.ID).SaveX(ctx)
	return plain
}

// quotaUsage is one row of quotaUsage.
type quotaUsage struct {
	Quota                      struct{ ID string }
	TenantID, TenantName       string
	HostGroupID, HostGroupName string
	GroupCores, VcpuLimit      int
	UsedVCPUs                  int
	MemoryMB, UsedMemoryMB     int
	StorageGB, UsedStorageGB   int
}

const usageQuery = `query($t: ID, $g: ID) { quotaUsage(tenantID: $t, hostGroupID: $g) { quota { id cpuPercent vcpus }
	tenantID tenantName hostGroupID hostGroupName groupCores vcpuLimit usedVCPUs memoryMB usedMemoryMB storageGB usedStorageGB } }`

func TestQuotas(t *testing.T) {
	env, f := newEnv(t)
	s := site(t, env)
	flavor := flavorOf(f)
	tenant, hg := gqltest.ID(s.Tenant), gqltest.ID(s.HostGroup)
	set := func(in map[string]any) map[string]any {
		t.Helper()
		var out struct{ SetQuota map[string]any }
		env.MustDo(t, `mutation($in: SetQuotaInput!) { setQuota(input: $in) { id cpuPercent vcpus memoryMB storageGB usedVcpus } }`,
			map[string]any{"in": in}, &out)
		return out.SetQuota
	}
	q := set(map[string]any{"tenantID": tenant, "hostGroupID": hg, "vcpus": 100, "memoryMB": 1 << 20})
	if q["cpuPercent"] != float64(100) || q["vcpus"] != float64(100) || q["storageGB"] != float64(0) {
		t.Errorf("new quota %v; want cpuPercent 100 (default), vcpus 100, storage unlimited", q)
	}
	again := set(map[string]any{"tenantID": tenant, "hostGroupID": hg, "cpuPercent": 25})
	if again["id"] != q["id"] || again["vcpus"] != float64(100) || again["cpuPercent"] != float64(25) {
		t.Errorf("setQuota again %v; want the same quota, vcpus kept, cpuPercent 25", again)
	}
	env.Do(t, `mutation($in: SetQuotaInput!) { setQuota(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"tenantID": tenant, "hostGroupID": hg, "cpuPercent": 150}}).ExpectError(t, "VALIDATION", "cpuPercent")

	// Concurrent setQuota calls for a new tenant and host group make one quota.
	newTenant, newGroup := f.Tenant(), f.HostGroup()
	var wg sync.WaitGroup
	answers := make([]gqltest.Response, 10)
	for i := range answers {
		wg.Go(func() {
			answers[i] = env.Do(t, `mutation($in: SetQuotaInput!) { setQuota(input: $in) { id } }`,
				map[string]any{"in": map[string]any{"tenantID": newTenant, "hostGroupID": newGroup, "vcpus": 10 + i}})
		})
	}
	wg.Wait()
	ids := map[string]bool{}
	for _, r := range answers {
		var out struct{ SetQuota struct{ ID string } }
		if len(r.Errors) > 0 || json.Unmarshal(r.Data, &out) != nil {
			t.Errorf("concurrent setQuota: %s %s", r.Data, r.ErrorsString())
			continue
		}
		ids[out.SetQuota.ID] = true
	}
	if len(ids) != 1 {
		t.Errorf("concurrent setQuota made quotas %v, want one", ids)
	}

	// 8 hosts of 8 cores: 25% is 16 vCPUs, tighter than 100.
	usage := func(env *gqltest.Env, vars map[string]any) []quotaUsage {
		t.Helper()
		var out struct{ QuotaUsage []quotaUsage }
		env.MustDo(t, usageQuery, vars, &out)
		return out.QuotaUsage
	}
	createVM(t, env, vmIn(s, flavor))
	us := usage(env, map[string]any{"t": tenant})
	if len(us) != 1 {
		t.Fatalf("quotaUsage(tenantID) = %+v, want one row", us)
	}
	u := us[0]
	if u.GroupCores != 64 || u.VcpuLimit != 16 || u.UsedVCPUs != 2 || u.UsedMemoryMB != 2048 || u.UsedStorageGB != 20 ||
		u.TenantName == "" || u.HostGroupID != hg || u.HostGroupName == "" || u.MemoryMB != 1<<20 {
		t.Errorf("usage %+v; want 64 cores, limit 16, 2 vCPUs, 2048 MB, 20 GB used", u)
	}
	// The percentage is enforced: 7 more 2-vCPU VMs fit (16), the 8th does not.
	for range 7 {
		createVM(t, env, vmIn(s, flavor))
	}
	tryVM(t, env, vmIn(s, flavor)).ExpectError(t, "QUOTA_EXCEEDED", "")
	books(t, s)
	if us := usage(env, map[string]any{"g": hg}); len(us) != 1 || us[0].UsedVCPUs != 16 {
		t.Errorf("quotaUsage(hostGroupID) = %+v; want one row using 16", us)
	}

	// Tenants see only their own quotas, read-only.
	other, err := placementtest.Build(gqltest.System(), env.Client, placementtest.Spec{Racks: 1, HostsPerRack: 1, CPU: 8, MemoryMB: 8192, Cores: 4})
	if err != nil {
		t.Fatal(err)
	}
	set(map[string]any{"tenantID": gqltest.ID(other.Tenant), "hostGroupID": gqltest.ID(other.HostGroup), "vcpus": 4})
	member := env.As(memberToken(t, env, s.Tenant))
	mine := usage(member, nil)
	if len(mine) != 1 || mine[0].TenantID != tenant || mine[0].HostGroupName == "" {
		t.Errorf("a member of the tenant sees %+v; want only its own quota", mine)
	}
	if theirs := usage(member, map[string]any{"t": gqltest.ID(other.Tenant)}); len(theirs) != 0 {
		t.Errorf("a member of one tenant sees another's quotas: %+v", theirs)
	}
	if all := usage(env, map[string]any{"g": gqltest.ID(other.HostGroup)}); len(all) != 1 || all[0].TenantID != gqltest.ID(other.Tenant) {
		t.Errorf("the admin sees %+v in the other site's host group", all)
	}
	member.Do(t, `mutation($in: SetQuotaInput!) { setQuota(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"tenantID": tenant, "hostGroupID": hg, "vcpus": 1000}}).ExpectError(t, "FORBIDDEN", "")
}

// TestTenantMemberPlaces: a tenant member creates and deletes its tenant's VMs (placement
// acts as the system for nodes and quotas) but not another tenant's.
func TestTenantMemberPlaces(t *testing.T) {
	env, f := newEnv(t)
	s := site(t, env)
	flavor := flavorOf(f)
	member := env.As(memberToken(t, env, s.Tenant))
	var out struct {
		CreateVirtualMachine struct{ ID, Status, StatusReason string }
	}
	member.MustDo(t, `mutation($in: CreateVirtualMachineInput!) { createVirtualMachine(input: $in) { id status statusReason } }`,
		map[string]any{"in": vmIn(s, flavor)}, &out)
	if out.CreateVirtualMachine.Status != "INITIALIZING" || !strings.HasPrefix(out.CreateVirtualMachine.StatusReason, "placed;") {
		t.Errorf("member's VM: %+v", out.CreateVirtualMachine)
	}
	books(t, s)
	member.Do(t, `mutation($in: CreateVirtualMachineInput!) { createVirtualMachine(input: $in) { id } }`,
		map[string]any{"in": vmIn(s, flavor, map[string]any{"tenantID": f.Tenant()})}).ExpectError(t, "FORBIDDEN", "")
	svc := createService(t, env, svcIn(s, flavor, 2, nil))
	var scaled struct{ ScaleRegionService struct{ Replicas int } }
	member.MustDo(t, `mutation($id: ID!) { scaleRegionService(id: $id, replicas: 3) { replicas } }`, map[string]any{"id": svc.ID}, &scaled)
	if scaled.ScaleRegionService.Replicas != 3 {
		t.Errorf("member scaled to %d, want 3", scaled.ScaleRegionService.Replicas)
	}
	member.MustDo(t, `mutation($id: ID!) { deleteVirtualMachine(id: $id) }`, map[string]any{"id": out.CreateVirtualMachine.ID}, nil)
	books(t, s)
	other := env.As(memberToken(t, env, atoi(t, f.Tenant())))
	other.Do(t, `mutation($id: ID!) { scaleRegionService(id: $id, replicas: 1) { id } }`, map[string]any{"id": svc.ID}).ExpectError(t, "NOT_FOUND", "")
	other.Do(t, `mutation($id: ID!) { deleteVirtualMachine(id: $id) }`, map[string]any{"id": svc.vms()[0].ID}).ExpectError(t, "NOT_FOUND", "")
}

// outcomes counts the answers of concurrent requests by error code ("" for success).
func outcomes(t *testing.T, rs []gqltest.Response) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, r := range rs {
		if len(r.Errors) == 0 {
			out[""]++
			continue
		}
		out[r.Errors[0].Code()]++
	}
	return out
}

// concurrently sends n createVirtualMachine requests at once, each in its own request and
// transaction, and returns the answers.
func concurrently(t *testing.T, env *gqltest.Env, n int, in func(i int) map[string]any) []gqltest.Response {
	t.Helper()
	rs := make([]gqltest.Response, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			rs[i] = tryVM(t, env, in(i))
		})
	}
	close(start)
	wg.Wait()
	return rs
}

// TestPlacementRaceQuota: 200 concurrent requests for a tenant with room for exactly 10.
func TestPlacementRaceQuota(t *testing.T) {
	env, f := newEnv(t)
	s := site(t, env)
	flavor := flavorOf(f)
	if _, err := s.Quota(gqltest.System(), s.Tenant, 20, 0); err != nil {
		t.Fatal(err)
	}
	got := outcomes(t, concurrently(t, env, 200, func(int) map[string]any { return vmIn(s, flavor) }))
	if got[""] != 10 || got["QUOTA_EXCEEDED"] != 190 {
		t.Errorf("outcomes %v; want 10 placed and 190 QUOTA_EXCEEDED", got)
	}
	books(t, s)
}

// TestPlacementRaceCapacity: 200 concurrent requests for the last 10 free slots of a cluster.
func TestPlacementRaceCapacity(t *testing.T) {
	env, f := newEnv(t)
	s, err := placementtest.Build(gqltest.System(), env.Client, placementtest.Spec{
		Racks: 5, HostsPerRack: 1, CPU: 4, MemoryMB: 65536, DiskGB: 1000, Cores: 2})
	if err != nil {
		t.Fatal(err)
	}
	flavor := flavorOf(f)
	got := outcomes(t, concurrently(t, env, 200, func(int) map[string]any { return vmIn(s, flavor) }))
	if got[""] != 10 || got["NO_CAPACITY"] != 190 {
		t.Errorf("outcomes %v; want 10 placed and 190 NO_CAPACITY", got)
	}
	books(t, s)
}

// TestPlacementTwoServers: two server instances (each its own ent client, connection pool and
// handler, as two replicas would be) place 1,000 VMs at once against one PostgreSQL
// database: 100 region services of 10 replicas with hard rack anti-affinity, each created
// with 5 on one server and scaled to 10 on the other, 16 workers per server. SQL sums at the
// end: no node over capacity, allocations and quota usage equal to the VMs, no service with
// two VMs in one rack.
func TestPlacementTwoServers(t *testing.T) {
	dsn := testdb.DSN(t)
	a, b := gqltest.Postgres(t, dsn), gqltest.Postgres(t, dsn)
	s, err := placementtest.Build(gqltest.System(), a.Client, placementtest.Spec{
		Racks: 20, HostsPerRack: 5, PowerZones: 4, NetworkZones: 2,
		CPU: 24, MemoryMB: 65536, DiskGB: 1000, Cores: 12})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Quota(gqltest.System(), s.Tenant, 100_000, 0); err != nil {
		t.Fatal(err)
	}
	flavor := flavorOf(newFx(t, a))
	const services, workers = 100, 16
	jobs := make(chan int, services)
	for i := range services {
		jobs <- i
	}
	close(jobs)
	var failures sync.Map
	var wg sync.WaitGroup
	start := time.Now()
	for w := range 2 * workers {
		mine, other := a, b
		if w%2 == 1 {
			mine, other = b, a
		}
		wg.Go(func() {
			for range jobs {
				r := tryService(t, mine, svcIn(s, flavor, 5, zones("RACK", "ANTI_AFFINITY", "")))
				if len(r.Errors) > 0 {
					failures.Store(uniq("create"), r.ErrorsString())
					continue
				}
				var out struct{ CreateRegionService struct{ ID string } }
				if err := json.Unmarshal(r.Data, &out); err != nil {
					failures.Store(uniq("decode"), err.Error())
					continue
				}
				if r := scale(t, other, out.CreateRegionService.ID, 10); len(r.Errors) > 0 {
					failures.Store(uniq("scale"), r.ErrorsString())
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	failures.Range(func(k, v any) bool {
		t.Errorf("%s: %s", k, v)
		return true
	})
	n := a.Client.VirtualMachine.Query().Where(virtualmachine.HasNodeWith(computenode.IDIn(nodeIDs(s)...))).CountX(gqltest.System())
	t.Logf("%d VMs placed by two servers in %v (%.0f placements/s)", n, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds())
	if n != services*10 {
		t.Errorf("%d VMs placed, want %d", n, services*10)
	}
	books(t, s)
	shared, err := s.RackSharing(gqltest.System())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range shared {
		t.Error(v)
	}
}

// TestConcurrentScaleOfOneService: both servers scale one service up and down at once; the
// scales take turns on the service's row, so replicas always equal its VMs and no two of
// them share a rack.
func TestConcurrentScaleOfOneService(t *testing.T) {
	dsn := testdb.DSN(t)
	a, b := gqltest.Postgres(t, dsn), gqltest.Postgres(t, dsn)
	s, err := placementtest.Build(gqltest.System(), a.Client, placementtest.Spec{
		Racks: 10, HostsPerRack: 2, CPU: 16, MemoryMB: 65536, DiskGB: 1000, Cores: 8})
	if err != nil {
		t.Fatal(err)
	}
	flavor := flavorOf(newFx(t, a))
	svc := createService(t, a, svcIn(s, flavor, 1, zones("RACK", "ANTI_AFFINITY", "")))
	var wg sync.WaitGroup
	var failures sync.Map
	for w := range 8 {
		env := a
		if w%2 == 1 {
			env = b
		}
		wg.Go(func() {
			for i := range 6 {
				if r := scale(t, env, svc.ID, 1+(w*3+i*5)%9); len(r.Errors) > 0 {
					failures.Store(uniq("scale"), r.ErrorsString())
				}
			}
		})
	}
	wg.Wait()
	failures.Range(func(k, v any) bool {
		t.Errorf("%s: %s", k, v)
		return true
	})
	got := readService(t, a, svc.ID)
	if got.Replicas != got.VirtualMachines.TotalCount {
		t.Errorf("replicas %d, but %d VMs", got.Replicas, got.VirtualMachines.TotalCount)
	}
	books(t, s)
	shared, err := s.RackSharing(gqltest.System())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range shared {
		t.Error(v)
	}
}

// TestPlacementRaceSQLite: the embedded database serializes the writers (immediate
// transactions wait their turn), and the quota holds exactly there too.
func TestPlacementRaceSQLite(t *testing.T) {
	env := gqltest.SQLite(t)
	s := site(t, env)
	flavor := flavorOf(newFx(t, env))
	if _, err := s.Quota(gqltest.System(), s.Tenant, 20, 0); err != nil {
		t.Fatal(err)
	}
	got := outcomes(t, concurrently(t, env, 40, func(int) map[string]any { return vmIn(s, flavor) }))
	if got[""] != 10 || got["QUOTA_EXCEEDED"] != 30 {
		t.Errorf("outcomes %v; want 10 placed and 30 QUOTA_EXCEEDED", got)
	}
	books(t, s)
	svc := createService(t, env, svcIn(s, flavor, 0, zones("RACK", "ANTI_AFFINITY", "")))
	scale(t, env, svc.ID, 1).ExpectError(t, "QUOTA_EXCEEDED", "")
	env.MustDo(t, `mutation($in: SetQuotaInput!) { setQuota(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"tenantID": gqltest.ID(s.Tenant), "hostGroupID": gqltest.ID(s.HostGroup), "vcpus": 0}}, nil)
	var up struct{ ScaleRegionService service }
	env.MustDo(t, `mutation($id: ID!) { scaleRegionService(id: $id, replicas: 4) { `+serviceFields+` } }`, map[string]any{"id": svc.ID}, &up)
	if up.ScaleRegionService.Replicas != 4 {
		t.Errorf("replicas %d, want 4", up.ScaleRegionService.Replicas)
	}
	books(t, s)
}
