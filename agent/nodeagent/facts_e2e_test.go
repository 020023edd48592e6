package nodeagent_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/virtflow/virtflow/agent/hypervisor"
	"github.com/virtflow/virtflow/agent/nodeagent"
	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/provider"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// TestEnrolledNodeTakesVMWithDisk: a node whose agent registers with a join token reports
// its storage pool's size as disk capacity, its OS, kernel, domain type and providers, and
// a VM with a disk is then placed on it through the API with no operator action. Before the
// registration the same VM is refused NO_CAPACITY (the node has no disk capacity and no
// provider), as it was for every such node before agents reported their disk.
func TestEnrolledNodeTakesVMWithDisk(t *testing.T) {
	for _, tc := range []struct {
		name       string
		hv         func(t *testing.T) hypervisor.Hypervisor
		domainType string
	}{
		{name: "simulated", hv: func(t *testing.T) hypervisor.Hypervisor { return mustSim(t) }, domainType: hypervisor.DomainTypeSimulated},
		{name: "libvirt test driver", hv: func(t *testing.T) hypervisor.Hypervisor { return libvirtTestDriver(t) }, domainType: hypervisor.DomainTypeTest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hv := tc.hv(t)
			env := gqltest.Postgres(t, testdb.DSN(t))
			srv := httptest.NewServer(env.Handler)
			t.Cleanup(srv.Close)
			ctx := gqltest.System()
			c := env.Client
			site, err := placementtest.Build(ctx, c, placementtest.Spec{Racks: 1, HostsPerRack: 1, PowerZones: 1,
				NetworkZones: 1, CPU: 16, MemoryMB: 65536, DiskGB: 0, Cores: 8, Providers: true})
			if err != nil {
				t.Fatal(err)
			}
			node := site.Nodes[0].ID
			c.ComputeNode.UpdateOneID(node).ClearProviders().ExecX(ctx) // as a node an operator just created
			fl, err := site.Flavor(ctx, 1, 128, 20, false)
			if err != nil {
				t.Fatal(err)
			}
			admin := &gqltest.Env{Handler: env.Handler, Token: gqltest.AdminToken}
			create := func(name string) error {
				return (&nodeagent.Client{URL: srv.URL + "/query", Token: gqltest.AdminToken}).Do(ctx,
					`mutation($in: CreateVirtualMachineInput!) { createVirtualMachine(input: $in) { id } }`,
					map[string]any{"in": map[string]any{"name": name, "tenantID": gqltest.ID(site.Tenant),
						"regionID": gqltest.ID(site.Region), "flavorID": gqltest.ID(fl.ID)}}, nil)
			}
			if err := create("before"); err == nil || !strings.Contains(err.Error(), "NO_CAPACITY") {
				t.Fatalf("a VM with a 20 GB disk on a node without disk capacity: %v, want NO_CAPACITY", err)
			}

			var jt struct{ CreateJoinToken struct{ Token string } }
			admin.MustDo(t, `mutation($n: ID!) { createJoinToken(input: {nodeID: $n, expiresInSeconds: 300}) { token } }`,
				map[string]any{"n": gqltest.ID(node)}, &jt)
			pool := uniq("pool")
			token, nodeID, err := nodeagent.Enroll(context.Background(), nodeagent.Enrollment{APIURL: srv.URL + "/query",
				CredentialFile: t.TempDir() + "/token", JoinToken: jt.CreateJoinToken.Token, Hostname: uniq("host"),
				Hypervisor: hv, Pool: pool, PoolPath: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if nodeID != gqltest.ID(node) {
				t.Fatalf("enrolled node %s, want %s", nodeID, gqltest.ID(node))
			}
			n := c.ComputeNode.Query().Where(computenode.ID(node)).WithProviders().OnlyX(ctx)
			t.Logf("registered: disk %d GB, OS %q %q, kernel %q, domain type %q, %d providers",
				n.DiskCapacityGB, n.OsName, n.OsVersion, n.KernelVersion, n.DomainType, len(n.Edges.Providers))
			linked := false // every VM-on-libvirt provider of the catalog (the package's database has several sites)
			for _, p := range n.Edges.Providers {
				linked = linked || p.ID == site.Provider
				if p.Kind != provider.KindVirtualMachine || p.Driver != provider.DriverLibvirt {
					t.Errorf("node linked to provider %s (%s on %s)", p.Name, p.Kind, p.Driver)
				}
			}
			if n.DiskCapacityGB < 20 || n.OsName == "" || n.KernelVersion == "" || n.DomainType != tc.domainType || !linked {
				t.Fatalf("after registering: disk %d GB, OS %q, kernel %q, domain type %q, providers %v",
					n.DiskCapacityGB, n.OsName, n.KernelVersion, n.DomainType, n.Edges.Providers)
			}
			// A heartbeat, under the agent's own token, reports the same: what an operator
			// undid by hand comes back.
			c.ComputeNode.UpdateOneID(node).SetDiskCapacityGB(0).ClearProviders().ClearOsName().ExecX(ctx)
			ag, err := nodeagent.New(nodeagent.Config{APIURL: srv.URL + "/query", Token: token, NodeID: nodeID, Hypervisor: hv,
				Log: quiet(), NoChecks: true, NoSubscription: true, Pool: pool, PoolPath: t.TempDir(), CacheDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if err := ag.Heartbeat(context.Background()); err != nil {
				t.Fatalf("heartbeat: %v", err)
			}
			if n2 := c.ComputeNode.Query().Where(computenode.ID(node)).WithProviders().OnlyX(ctx); n2.DiskCapacityGB != n.DiskCapacityGB ||
				n2.OsName != n.OsName || len(n2.Edges.Providers) != len(n.Edges.Providers) {
				t.Fatalf("after a heartbeat: disk %d GB, OS %q, %d providers; want %d, %q, %d",
					n2.DiskCapacityGB, n2.OsName, len(n2.Edges.Providers), n.DiskCapacityGB, n.OsName, len(n.Edges.Providers))
			}
			if err := create("after"); err != nil {
				t.Fatalf("a VM with a disk on the enrolled node: %v", err)
			}
			vm := c.ComputeNode.QueryVirtualMachines(n).OnlyX(ctx)
			if vm.Name != "after" {
				t.Fatalf("VM %q placed on the node, want after", vm.Name)
			}
		})
	}
}
