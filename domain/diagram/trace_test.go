package diagram_test

import (
	"testing"

	"github.com/virtflow/virtflow/domain/fabric"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/ent/port"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

const traceQuery = `query($id: ID!) { tracePath(portID: $id) {
  from { id name mac addresses }
  hops { level linkID fromHostID fromHostName fromPort toHostID toHostName toPort toRole }
  reachedGateway } }`

type gqlTrace struct {
	TracePath struct {
		From struct {
			ID, Name  string
			MAC       *string
			Addresses []string
		}
		Hops []struct {
			Level                                      int
			LinkID, FromHostID, FromHostName, FromPort string
			ToHostID, ToHostName, ToPort               string
			ToRole                                     *string
		}
		ReachedGateway bool
	}
}

func TestTracePath(t *testing.T) {
	env := newEnv(t)
	s := buildSite(t, env.Client, siteSpec{Racks: 2, Servers: 2, Ports: 2, Fabric: true})
	ctx := gqltest.System()
	portOf := func(h *ent.Host, name string) *ent.Port {
		t.Helper()
		return env.Client.Port.Query().Where(port.Name(name), port.HasHostWith(host.ID(h.ID))).OnlyX(ctx)
	}
	server := s.servers[0][0]
	eth0 := portOf(server, fabric.ServerPort0)

	var out gqlTrace
	env.MustDo(t, traceQuery, map[string]any{"id": eth0.ID}, &out)
	tr := out.TracePath
	if tr.From.ID != gqltest.ID(eth0.ID) || tr.From.Name != "eth0" || deref(tr.From.MAC) != eth0.MAC || len(tr.From.Addresses) != 1 {
		t.Errorf("from = %+v, want eth0 with its MAC and address", tr.From)
	}
	if !tr.ReachedGateway {
		t.Errorf("reachedGateway = false")
	}

	// server → its rack's leaf01 → 2 rack-spines → 4 floor-leaves each → 4 floor-spines each →
	// 2 gateways each: every cable climbed, level by level.
	type level struct {
		hops, from, to int
		role           string
	}
	want := []level{
		{1, 1, 1, "RACK_LEAF"},
		{fabric.SpinesPerLeaf, 1, fabric.SpinesPerLeaf, "RACK_SPINE"},
		{fabric.SpinesPerLeaf * fabric.DefaultFloorLeaves, fabric.SpinesPerLeaf, fabric.DefaultFloorLeaves, "FLOOR_LEAF"},
		{fabric.DefaultFloorLeaves * fabric.DefaultFloorSpines, fabric.DefaultFloorLeaves, fabric.DefaultFloorSpines, "FLOOR_SPINE"},
		{fabric.DefaultFloorSpines * fabric.DefaultGateways, fabric.DefaultFloorSpines, fabric.DefaultGateways, "GATEWAY_ROUTER"},
	}
	reached := map[int]map[string]bool{0: {gqltest.ID(server.ID): true}}
	for l, w := range want {
		from, to, links := map[string]bool{}, map[string]bool{}, map[string]bool{}
		hops := 0
		for _, h := range tr.Hops {
			if h.Level != l+1 {
				continue
			}
			hops++
			from[h.FromHostID], to[h.ToHostID], links[h.LinkID] = true, true, true
			if deref(h.ToRole) != w.role {
				t.Errorf("level %d hop %s:%s -> %s:%s reaches a %s, want %s", h.Level, h.FromHostName, h.FromPort, h.ToHostName, h.ToPort, deref(h.ToRole), w.role)
			}
			if !reached[l][h.FromHostID] {
				t.Errorf("level %d hop starts at %s, which level %d did not reach", h.Level, h.FromHostName, l)
			}
		}
		if hops != w.hops || len(from) != w.from || len(to) != w.to || len(links) != hops {
			t.Errorf("level %d: %d hops (%d links) from %d devices to %d; want %d hops from %d to %d",
				l+1, hops, len(links), len(from), len(to), w.hops, w.from, w.to)
		}
		reached[l+1] = to
	}
	if len(tr.Hops) == 0 || tr.Hops[0].FromPort != "eth0" || tr.Hops[0].ToHostName != fabric.RackLeafName(s.p, s.floor.Name, s.racks[0].Name, 1) {
		t.Errorf("first hop = %+v, want eth0 to the rack's leaf01", tr.Hops)
	}
	if n := len(tr.Hops); n != 1+2+8+16+8 {
		t.Errorf("%d hops, want 35", n)
	}
	for i := 1; i < len(tr.Hops); i++ {
		if tr.Hops[i].Level < tr.Hops[i-1].Level {
			t.Fatalf("hops not breadth first: level %d after %d", tr.Hops[i].Level, tr.Hops[i-1].Level)
		}
	}

	t.Run("eth1 climbs through the paired rack's leaf02", func(t *testing.T) {
		var out gqlTrace
		env.MustDo(t, traceQuery, map[string]any{"id": portOf(server, fabric.ServerPort1).ID}, &out)
		hops := out.TracePath.Hops
		if len(hops) == 0 || hops[0].ToHostName != fabric.RackLeafName(s.p, s.floor.Name, s.racks[1].Name, 2) || !out.TracePath.ReachedGateway {
			t.Errorf("first hop %+v, want the paired rack's leaf02", hops)
		}
	})

	t.Run("never down: from a leaf's server port or a gateway there is nothing to climb", func(t *testing.T) {
		link := env.Client.Port.Query().Where(port.ID(eth0.ID)).QueryLinkA().OnlyX(ctx)
		down := link.QueryBPort().OnlyX(ctx)
		gw := env.Client.Port.Query().Where(port.HasHostWith(host.ID(s.root.Gateways[0].ID))).FirstX(ctx)
		for _, p := range []*ent.Port{down, gw} {
			var out gqlTrace
			env.MustDo(t, traceQuery, map[string]any{"id": p.ID}, &out)
			if len(out.TracePath.Hops) != 0 || out.TracePath.ReachedGateway {
				t.Errorf("from %s: %+v, want no hops", p.Name, out.TracePath)
			}
		}
	})

	t.Run("bad port", func(t *testing.T) {
		for _, id := range []int{eth0.ID + 1_000_000, server.ID, 1 << 50} {
			res := env.Do(t, traceQuery, map[string]any{"id": id})
			res.ExpectError(t, "NOT_FOUND", "")
		}
	})

	t.Run("a tenant member may not trace the fabric", func(t *testing.T) {
		member := env.As(tenantToken(t, env, s.tenant))
		member.Do(t, traceQuery, map[string]any{"id": eth0.ID}).ExpectError(t, "NOT_FOUND", "")
	})
}
