package diagram_test

import (
	"context"
	"testing"

	"github.com/virtflow/virtflow/domain/diagram"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// view runs one view of a site through client c.
type view struct {
	name  string
	max   int // the bound the view's doc comment promises
	run   func(ctx context.Context, c *ent.Client, s *site) (any, error)
	check func(t *testing.T, s *site, v any) // that the view did see the site's size
}

func depth(d int) *int { return &d }

var views = []view{
	{"rackElevation", 12, func(ctx context.Context, c *ent.Client, s *site) (any, error) {
		return diagram.Rack(ctx, c, s.racks[0].ID)
	},
		func(t *testing.T, s *site, v any) {
			if n := len(v.(*diagram.RackElevation).Devices); n != s.spec.Servers+3 { // + 2 rack-leaves + storage switch
				t.Errorf("%d devices, want %d", n, s.spec.Servers+3)
			}
		}},
	{"floorView", 9, func(ctx context.Context, c *ent.Client, s *site) (any, error) {
		return diagram.Floor(ctx, c, s.floor.ID)
	},
		func(t *testing.T, s *site, v any) {
			if n := len(v.(*diagram.FloorView).Racks); n != s.spec.Racks+1 {
				t.Errorf("%d racks, want %d", n, s.spec.Racks+1)
			}
		}},
	{"datacenterView", 10, func(ctx context.Context, c *ent.Client, s *site) (any, error) {
		return diagram.Datacenter(ctx, c, s.dc.ID)
	},
		func(t *testing.T, s *site, v any) {
			if n := v.(*diagram.DatacenterView).Clusters[0].VMCount; n != s.vms {
				t.Errorf("%d VMs, want %d", n, s.vms)
			}
		}},
	{"clusterView", 8, func(ctx context.Context, c *ent.Client, s *site) (any, error) {
		return diagram.Cluster(ctx, c, s.cluster.ID)
	},
		func(t *testing.T, s *site, v any) {
			if n := len(v.(*diagram.ClusterView).Nodes); n != len(s.nodes) {
				t.Errorf("%d nodes, want %d", n, len(s.nodes))
			}
		}},
	{"networkDiagram from a server, depth 2", 2 + 8*2 + 5, func(ctx context.Context, c *ent.Client, s *site) (any, error) {
		return diagram.Network(ctx, c, s.servers[0][0].ID, depth(2))
	}, func(t *testing.T, s *site, v any) {
		// The server's storage networks hold every server at depth 2.
		hosts := 0
		for _, n := range v.(*diagram.NetworkDiagram).Nodes {
			if n.Kind == diagram.NodeHost {
				hosts++
			}
		}
		if want := s.spec.Racks * s.spec.Servers; hosts != want {
			t.Errorf("%d servers, want %d", hosts, want)
		}
	}},
	{"networkDiagram from a server, depth 4", 2 + 8*4 + 5, func(ctx context.Context, c *ent.Client, s *site) (any, error) {
		return diagram.Network(ctx, c, s.servers[0][0].ID, depth(4))
	}, nil},
	{"networkDiagram from a network, depth 1", 2 + 7 + 4, func(ctx context.Context, c *ent.Client, s *site) (any, error) {
		return diagram.Network(ctx, c, s.networks[0].ID, depth(1))
	}, nil},
	{"tracePath", 3 + 4*5, func(ctx context.Context, c *ent.Client, s *site) (any, error) {
		return diagram.Trace(ctx, c, s.firstPort)
	}, func(t *testing.T, s *site, v any) {
		if !v.(*diagram.PathTrace).ReachedGateway {
			t.Errorf("the trace did not reach the gateways")
		}
	}},
}

// Every view runs the same number of SQL statements on a site of 2 racks of 2 servers as on
// one of 10 racks of 8 servers (with 4 ports each, links, addresses, VMs, alerts and the
// fabric), and no more than its doc comment promises.
func TestStatementsDoNotGrowWithSize(t *testing.T) {
	env := newEnv(t)
	small := buildSite(t, env.Client, siteSpec{Racks: 2, Servers: 2, Ports: 4, VMsPerNode: 1, Fabric: true})
	large := buildSite(t, env.Client, siteSpec{Racks: 10, Servers: 8, Ports: 4, VMsPerNode: 3, Fabric: true})
	ctx := viewerCtx(t, env, gqltest.AdminToken)
	c, counted := countingClient(env)
	for _, v := range views {
		t.Run(v.name, func(t *testing.T) {
			var n [2]int64
			for i, s := range []*site{small, large} {
				counted.n.Store(0)
				out, err := v.run(ctx, c, s)
				if err != nil {
					t.Fatal(err)
				}
				n[i] = counted.n.Load()
				if v.check != nil {
					v.check(t, s, out)
				}
			}
			t.Logf("%d statements with 2x2 servers, %d with 10x8", n[0], n[1])
			if n[0] != n[1] {
				t.Errorf("%d statements on the small site, %d on the large one", n[0], n[1])
			}
			if n[1] > int64(v.max) {
				t.Errorf("%d statements, more than the %d documented", n[1], v.max)
			}
		})
	}
}

// The views work on the embedded SQLite database too (where ids are matched with IN lists
// rather than PostgreSQL arrays).
func TestViewsOnSQLite(t *testing.T) {
	env := gqltest.SQLite(t)
	r := buildSmallRack(t, env.Client)
	n := buildSmallNet(t, env.Client)
	ctx := viewerCtx(t, env, gqltest.AdminToken)
	c := env.Client
	el, err := diagram.Rack(ctx, c, r.rack.ID)
	if err != nil || el.UsedUnits != 5 || el.Devices[4].Node.VMCount != 2 || el.Devices[4].Alerts.Warning != 2 {
		t.Errorf("rack: %+v, %v", el, err)
	}
	if fv, err := diagram.Floor(ctx, c, r.floor.ID); err != nil || len(fv.Racks) != 1 || fv.Racks[0].Alerts.Fatal != 1 {
		t.Errorf("floor: %+v, %v", fv, err)
	}
	if dv, err := diagram.Datacenter(ctx, c, r.dc.ID); err != nil || len(dv.Clusters) != 1 || dv.Clusters[0].VMCount != 2 {
		t.Errorf("datacenter: %+v, %v", dv, err)
	}
	if cv, err := diagram.Cluster(ctx, c, r.cluster.ID); err != nil || len(cv.Nodes) != 2 {
		t.Errorf("cluster: %+v, %v", cv, err)
	}
	if d, err := diagram.Network(ctx, c, n.a.ID, depth(3)); err != nil || len(d.Nodes) != 8 || len(d.Edges) != 7 {
		t.Errorf("network: %+v, %v", d, err)
	}
	if tr, err := diagram.Trace(ctx, c, n.aEth0.ID); err != nil || len(tr.Hops) != 2 || tr.Hops[0].ToHostID != n.s.ID || tr.Hops[1].ToHostID != n.r.ID {
		t.Errorf("trace: %+v, %v", tr, err)
	}
}
