package fabric_test

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/virtflow/virtflow/authz"
	"slices"
	"strings"
	"testing"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	_ "github.com/lib/pq"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/domain/fabric"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/host"
	"github.com/virtflow/virtflow/ent/link"
	"github.com/virtflow/virtflow/ent/migrate"
	"github.com/virtflow/virtflow/ent/port"
	"github.com/virtflow/virtflow/ent/rack"
	_ "github.com/virtflow/virtflow/ent/runtime"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

var (
	client *ent.Client
	db     *sql.DB
)

func TestMain(m *testing.M) {
	testdb.MainFunc(m, func(dsn string) int {
		var err error
		db, err = sql.Open("postgres", dsn)
		if err != nil {
			panic(err)
		}
		client = ent.NewClient(ent.Driver(entsql.OpenDB(dialect.Postgres, db)))
		defer client.Close()
		if err := client.Schema.Create(authz.SystemContext(context.Background(), "test"), migrate.WithForeignKeys(true)); err != nil {
			panic(err)
		}
		return m.Run()
	})
}

// site is a datacenter with one floor for a test.
type site struct {
	dc    *ent.Datacenter
	floor *ent.Floor
	net   *ent.Rack              // network rack rack-0-1
	racks map[string]*ent.Rack   // server racks by name
	hosts map[string][]*ent.Host // servers by rack name
}

// rackSpec is a server rack at row-position with n servers of 2U from the bottom.
type rackSpec struct {
	row      string
	position int
	servers  int
}

func newSite(t *testing.T, dcName, floorName string, racks ...rackSpec) *site {
	t.Helper()
	ctx := authz.SystemContext(context.Background(), "test")
	reg := client.Region.Create().SetName(dcName + "-region").SaveX(ctx)
	s := &site{racks: map[string]*ent.Rack{}, hosts: map[string][]*ent.Host{}}
	s.dc = client.Datacenter.Create().SetName(dcName).SetRegion(reg).SaveX(ctx)
	s.floor = client.Floor.Create().SetName(floorName).SetDatacenter(s.dc).SaveX(ctx)
	s.net = client.Rack.Create().SetName("rack-0-1").SetRow("0").SetPosition(1).SetFloor(s.floor).SaveX(ctx)
	for _, r := range racks {
		name := fmt.Sprintf("rack-%s-%d", r.row, r.position)
		rk := client.Rack.Create().SetName(name).SetRow(r.row).SetPosition(r.position).SetFloor(s.floor).SaveX(ctx)
		s.racks[name] = rk
		for i := 1; i <= r.servers; i++ {
			h := client.Host.Create().SetName(fabric.ServerName(dcName+"-", floorName, name, i)).
				SetKind(host.KindServer).SetRack(rk).SetPosition(2*i - 1).SetHeight(2).SaveX(ctx)
			s.hosts[name] = append(s.hosts[name], h)
		}
	}
	return s
}

func hostNames(hs []*ent.Host) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Name
	}
	return out
}

func TestBuildTinyFloor(t *testing.T) {
	ctx := authz.SystemContext(context.Background(), "test")
	s := newSite(t, "tiny", "floor-1-1-1", rackSpec{"1", 1, 2}, rackSpec{"1", 2, 2})
	const p = "tiny-"

	root, err := fabric.BuildRoot(ctx, client, s.dc.ID, fabric.WithHostPrefix(p), fabric.WithRack(s.net.ID))
	if err != nil {
		t.Fatalf("BuildRoot: %v", err)
	}
	if got, want := hostNames(root.Gateways), []string{"tiny-root-1-gateway-router01", "tiny-root-2-gateway-router01"}; !slices.Equal(got, want) {
		t.Errorf("gateways = %v, want %v", got, want)
	}
	wantSpines := []string{"tiny-root-1-floor-spine-router01", "tiny-root-1-floor-spine-router02",
		"tiny-root-1-floor-spine-router03", "tiny-root-1-floor-spine-router04"}
	if got := hostNames(root.FloorSpines); !slices.Equal(got, wantSpines) {
		t.Errorf("floor spines = %v, want %v", got, wantSpines)
	}
	if len(root.Links) != 8 {
		t.Errorf("root links = %d, want 8 (4 spines x 2 gateways)", len(root.Links))
	}
	if _, err := fabric.BuildRoot(ctx, client, s.dc.ID, fabric.WithHostPrefix(p)); !isCode(err, apierr.CodeConflict) {
		t.Errorf("second BuildRoot: err = %v, want CONFLICT", err)
	}

	// Root nil: Build finds the root routers in the datacenter's racks.
	res, err := fabric.Build(ctx, client, fabric.FloorSpec{FloorID: s.floor.ID, NetworkRackID: s.net.ID, HostPrefix: p})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	var want []string
	for i := 1; i <= 4; i++ {
		want = append(want, fmt.Sprintf("tiny-floor-1-1-1-floor-leaf-router%02d", i))
	}
	if got := hostNames(res.FloorLeaves); !slices.Equal(got, want) {
		t.Errorf("floor leaves = %v, want %v", got, want)
	}
	want = nil
	for i := 1; i <= 8; i++ {
		want = append(want, fmt.Sprintf("tiny-floor-1-1-1-rack-spine-router%02d", i))
	}
	if got := hostNames(res.RackSpines); !slices.Equal(got, want) {
		t.Errorf("rack spines = %v, want %v", got, want)
	}
	want = []string{
		"tiny-floor-1-1-1-rack-1-1-rack-leaf-router01", "tiny-floor-1-1-1-rack-1-1-rack-leaf-router02",
		"tiny-floor-1-1-1-rack-1-2-rack-leaf-router01", "tiny-floor-1-1-1-rack-1-2-rack-leaf-router02",
	}
	if got := hostNames(res.RackLeaves); !slices.Equal(got, want) {
		t.Errorf("rack leaves = %v, want %v", got, want)
	}
	for i, h := range res.RackLeaves {
		rk := s.racks[[]string{"rack-1-1", "rack-1-2"}[i/2]]
		hr, err := h.QueryRack().Only(ctx)
		if err != nil || hr.ID != rk.ID {
			t.Errorf("%s is in rack %v (err %v), want %s", h.Name, hr, err, rk.Name)
		}
		if wantPos := 42 - i%2; h.Position != wantPos || h.Height != 1 || h.Role == nil || *h.Role != host.RoleRackLeaf || h.Kind != host.KindRouter {
			t.Errorf("%s: position %d height %d role %s kind %s, want position %d height 1 RACK_LEAF ROUTER",
				h.Name, h.Position, h.Height, roleOf(h), h.Kind, wantPos)
		}
	}
	for _, h := range res.FloorLeaves {
		if roleOf(h) != host.RoleFloorLeaf {
			t.Errorf("%s role = %s", h.Name, roleOf(h))
		}
	}

	// 4 floor-leaves x 4 floor-spines + 8 rack-spines x 4 floor-leaves + 4 rack-leaves x 2
	// rack-spines + 4 servers x 2 ports.
	if len(res.Links) != 16+32+8+8 {
		t.Errorf("links = %d, want 64", len(res.Links))
	}
	if len(res.Ports) != 2*64 {
		t.Errorf("ports created = %d, want 128", len(res.Ports))
	}
	if res.Servers != 4 {
		t.Errorf("servers = %d, want 4", res.Servers)
	}
	labels := map[string]bool{}
	for _, l := range res.Links {
		labels[l.Label] = true
	}
	for _, l := range []string{
		// Uplinks take a router's lowest ports; the spines already used swp1-2 for the gateways.
		"tiny-root-1-floor-spine-router01:swp1 -- tiny-root-1-gateway-router01:swp1",
		"tiny-floor-1-1-1-floor-leaf-router01:swp1 -- tiny-root-1-floor-spine-router01:swp3",
		"tiny-floor-1-1-1-floor-leaf-router04:swp4 -- tiny-root-1-floor-spine-router04:swp6",
		"tiny-floor-1-1-1-rack-spine-router01:swp1 -- tiny-floor-1-1-1-floor-leaf-router01:swp5",
		"tiny-floor-1-1-1-rack-spine-router08:swp4 -- tiny-floor-1-1-1-floor-leaf-router04:swp12",
		"tiny-floor-1-1-1-rack-1-1-rack-leaf-router01:swp1 -- tiny-floor-1-1-1-rack-spine-router01:swp5",
		"tiny-floor-1-1-1-rack-1-1-rack-leaf-router02:swp2 -- tiny-floor-1-1-1-rack-spine-router04:swp5",
		"tiny-floor-1-1-1-rack-1-2-rack-leaf-router02:swp2 -- tiny-floor-1-1-1-rack-spine-router08:swp5",
		// eth0 to the own rack's leaf01, eth1 to the paired rack's leaf02.
		"tiny-floor-1-1-1-rack-1-1-server01:eth0 -- tiny-floor-1-1-1-rack-1-1-rack-leaf-router01:swp3",
		"tiny-floor-1-1-1-rack-1-1-server02:eth0 -- tiny-floor-1-1-1-rack-1-1-rack-leaf-router01:swp4",
		"tiny-floor-1-1-1-rack-1-1-server01:eth1 -- tiny-floor-1-1-1-rack-1-2-rack-leaf-router02:swp3",
		"tiny-floor-1-1-1-rack-1-2-server02:eth1 -- tiny-floor-1-1-1-rack-1-1-rack-leaf-router02:swp4",
	} {
		if !labels[l] && !hasLink(t, l) {
			t.Errorf("missing link %q", l)
		}
	}

	// Every server has eth0 and eth1, each the end of exactly one link.
	for _, hs := range s.hosts {
		for _, h := range hs {
			ps := h.QueryPorts().WithLinkA().WithLinkB().AllX(ctx)
			var names []string
			for _, p := range ps {
				names = append(names, p.Name)
				if (p.Edges.LinkA == nil) == (p.Edges.LinkB == nil) {
					t.Errorf("%s:%s is the end of %v/%v", h.Name, p.Name, p.Edges.LinkA, p.Edges.LinkB)
				}
			}
			slices.Sort(names)
			if !slices.Equal(names, []string{"eth0", "eth1"}) {
				t.Errorf("%s ports = %v, want [eth0 eth1]", h.Name, names)
			}
		}
	}
	checkNoPortInTwoLinks(t)
	checkNoOverlap(t)

	// The pair shares a new rack zone.
	zones := client.Rack.Query().Where(rack.IDIn(s.racks["rack-1-1"].ID, s.racks["rack-1-2"].ID)).
		QueryRackZone().AllX(ctx)
	if len(zones) != 1 || zones[0].Name != "floor-1-1-1-rack-1-1-and-1-2" {
		t.Errorf("rack zones of the pair = %v, want one floor-1-1-1-rack-1-1-and-1-2", zones)
	}

	// A second build of the same floor writes nothing.
	before := client.Link.Query().CountX(ctx)
	_, err = fabric.Build(ctx, client, fabric.FloorSpec{FloorID: s.floor.ID, NetworkRackID: s.net.ID, HostPrefix: p})
	if !isCode(err, apierr.CodeConflict) || !strings.Contains(err.Error(), "already has a fabric") {
		t.Errorf("second Build: err = %v, want CONFLICT 'already has a fabric'", err)
	}
	if after := client.Link.Query().CountX(ctx); after != before {
		t.Errorf("links after failed build = %d, want %d", after, before)
	}
}

func hasLink(t *testing.T, label string) bool {
	t.Helper()
	return client.Link.Query().Where(link.LabelEQ(label)).ExistX(authz.SystemContext(context.Background(), "test"))
}

// TestBuildInCallerTx checks Build joins the caller's transaction and reuses uncabled server
// ports.
func TestBuildInCallerTx(t *testing.T) {
	ctx := authz.SystemContext(context.Background(), "test")
	s := newSite(t, "txdc", "floor-2-1-1", rackSpec{"b", 3, 1}, rackSpec{"a", 2, 1}, rackSpec{"b", 7, 1}, rackSpec{"a", 1, 1})
	eth0 := client.Port.Create().SetName("eth0").SetHost(s.hosts["rack-a-1"][0]).SetMAC("02:00:00:00:00:01").SaveX(ctx)

	tx, err := client.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	root, err := fabric.BuildRoot(ctx, tx.Client(), s.dc.ID, fabric.WithHostPrefix("txdc-"), fabric.WithFloorSpines(2), fabric.WithGateways(1))
	if err != nil {
		t.Fatalf("BuildRoot: %v", err)
	}
	res, err := fabric.Build(ctx, tx.Client(), fabric.FloorSpec{
		FloorID: s.floor.ID, NetworkRackID: s.net.ID, Root: root, HostPrefix: "txdc-", FloorLeaves: 2, RackSpines: 2,
	})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	// 2x2 + 2x2 + 8 leaves x 2 + 4 servers x 2
	if len(res.Links) != 4+4+16+8 {
		t.Errorf("links = %d, want 32", len(res.Links))
	}
	var order []string
	for _, rk := range res.Racks {
		order = append(order, rk.Name)
	}
	if want := []string{"rack-a-1", "rack-a-2", "rack-b-3", "rack-b-7"}; !slices.Equal(order, want) {
		t.Errorf("pairing order = %v, want %v", order, want)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if n := client.Host.Query().Where(host.NameHasPrefix("txdc-"), host.KindEQ(host.KindRouter)).CountX(ctx); n != 0 {
		t.Errorf("routers after rollback = %d, want 0", n)
	}

	res, err = fabric.Build(ctx, client, fabric.FloorSpec{
		FloorID: s.floor.ID, NetworkRackID: s.net.ID, HostPrefix: "txdc-",
		Root: mustRoot(t, s, "txdc-"), FloorLeaves: 1, RackSpines: 2,
	})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	l, err := client.Port.Query().Where(port.ID(eth0.ID)).QueryLinkA().Only(ctx)
	if err != nil {
		t.Fatalf("eth0 created before the build is not cabled: %v", err)
	}
	if want := "txdc-floor-2-1-1-rack-a-1-server01:eth0 -- txdc-floor-2-1-1-rack-a-1-rack-leaf-router01:swp3"; l.Label != want {
		t.Errorf("label = %q, want %q", l.Label, want)
	}
	// The returned entities outlive Build's own transaction.
	if _, err := res.RackLeaves[0].QueryPorts().Count(ctx); err != nil {
		t.Errorf("query through a returned host: %v", err)
	}
}

func mustRoot(t *testing.T, s *site, prefix string) *fabric.Root {
	t.Helper()
	root, err := fabric.BuildRoot(authz.SystemContext(context.Background(), "test"), client, s.dc.ID, fabric.WithHostPrefix(prefix), fabric.WithFloorSpines(2))
	if err != nil {
		t.Fatalf("BuildRoot: %v", err)
	}
	return root
}

func isCode(err error, code apierr.Code) bool {
	e, ok := apierr.As(err)
	return ok && e.Code == code
}

func TestBuildRejectsBadInput(t *testing.T) {
	ctx := authz.SystemContext(context.Background(), "test")
	good := newSite(t, "bad", "floor-1-1-1", rackSpec{"1", 1, 1}, rackSpec{"1", 2, 1}, rackSpec{"1", 3, 1})
	root, err := fabric.BuildRoot(ctx, client, good.dc.ID, fabric.WithHostPrefix("bad-"))
	if err != nil {
		t.Fatal(err)
	}
	other := newSite(t, "bad2", "floor-1-1-2", rackSpec{"1", 1, 0}, rackSpec{"1", 2, 0})
	norow := client.Rack.Create().SetName("rack-x").SetFloor(good.floor).SaveX(ctx)
	full := client.Rack.Create().SetName("rack-2-1").SetRow("2").SetPosition(1).SetFloor(good.floor).SaveX(ctx)
	half := client.Rack.Create().SetName("rack-2-2").SetRow("2").SetPosition(2).SetFloor(good.floor).SaveX(ctx)
	client.Host.Create().SetName("bad-full-chassis").SetRack(full).SetPosition(1).SetHeight(41).SaveX(ctx)
	tinyNet := client.Rack.Create().SetName("rack-0-2").SetHeight(10).SetFloor(good.floor).SaveX(ctx)
	cabled := newSite(t, "bad3", "floor-1-1-1", rackSpec{"1", 1, 1}, rackSpec{"1", 2, 1})
	cabledRoot, err := fabric.BuildRoot(ctx, client, cabled.dc.ID, fabric.WithHostPrefix("bad3-"))
	if err != nil {
		t.Fatal(err)
	}
	a := client.Port.Create().SetName("eth0").SetHost(cabled.hosts["rack-1-1"][0]).SaveX(ctx)
	b := client.Port.Create().SetName("eth0").SetHost(cabled.hosts["rack-1-2"][0]).SaveX(ctx)
	client.Link.Create().SetAPort(a).SetBPort(b).SetLabel("hand-made").SaveX(ctx)

	r11, r12, r13 := good.racks["rack-1-1"].ID, good.racks["rack-1-2"].ID, good.racks["rack-1-3"].ID
	spec := func(racks ...int) fabric.FloorSpec {
		return fabric.FloorSpec{FloorID: good.floor.ID, NetworkRackID: good.net.ID, RackIDs: racks, Root: root, HostPrefix: "bad-"}
	}
	tests := []struct {
		name  string
		spec  fabric.FloorSpec
		code  apierr.Code
		field string
		msg   string
	}{
		{"no floor", fabric.FloorSpec{NetworkRackID: good.net.ID}, apierr.CodeValidation, "floorID", "is required"},
		{"unknown floor", fabric.FloorSpec{FloorID: 1 << 40, NetworkRackID: good.net.ID}, apierr.CodeNotFound, "", "floor 1099511627776 does not exist"},
		{"no network rack", fabric.FloorSpec{FloorID: good.floor.ID}, apierr.CodeValidation, "networkRackID", "is required"},
		{"one rack spine", func() fabric.FloorSpec { s := spec(r11, r12); s.RackSpines = 1; return s }(),
			apierr.CodeValidation, "rackSpines", "must be between 2 and 256"},
		{"unknown rack", spec(r11, 1<<40), apierr.CodeValidation, "rackIDs", "rack 1099511627776 does not exist"},
		{"rack twice", spec(r11, r11), apierr.CodeValidation, "rackIDs", "is listed twice"},
		{"network rack listed", spec(r11, good.net.ID), apierr.CodeValidation, "rackIDs", "is the network rack"},
		{"rack of another floor", spec(r11, other.racks["rack-1-1"].ID), apierr.CodeValidation, "rackIDs",
			"rack rack-1-1 stands on floor floor-1-1-2, not on floor floor-1-1-1"},
		{"network rack of another floor", func() fabric.FloorSpec { s := spec(r11, r12); s.NetworkRackID = other.net.ID; return s }(),
			apierr.CodeValidation, "networkRackID", "stands on floor floor-1-1-2"},
		{"odd row", spec(r11, r12, r13), apierr.CodeValidation, "rackIDs",
			"row 1 has an odd number of racks (3): rack floor-1-1-1/rack-1-3 has no pair"},
		{"rack without row", spec(r11, norow.ID), apierr.CodeValidation, "rackIDs", "rack floor-1-1-1/rack-x has no row"},
		{"full rack", spec(full.ID, half.ID), apierr.CodeValidation, "rackIDs",
			"rack floor-1-1-1/rack-2-1: only 1 of its 42U are free, 2 needed for its 2 rack-leaf routers"},
		{"full network rack", func() fabric.FloorSpec { s := spec(r11, r12); s.NetworkRackID = tinyNet.ID; return s }(),
			apierr.CodeValidation, "networkRackID", "only 10 of its 10U are free, 12 needed"},
		{"all racks of the floor", spec(), apierr.CodeValidation, "rackIDs", "has no row"},
		{"no floor spines", fabric.FloorSpec{FloorID: other.floor.ID, NetworkRackID: other.net.ID, HostPrefix: "bad2-"},
			apierr.CodeValidation, "root", "datacenter bad2 has no floor-spine routers"},
		{"cabled server port", fabric.FloorSpec{FloorID: cabled.floor.ID, NetworkRackID: cabled.net.ID, Root: cabledRoot, HostPrefix: "bad3-"},
			apierr.CodeConflict, "", "port bad3-floor-1-1-1-rack-1-1-server01:eth0 is already cabled (hand-made)"},
		{"root of another datacenter", func() fabric.FloorSpec { s := spec(r11, r12); s.Root = cabledRoot; return s }(),
			apierr.CodeValidation, "root", "but floor floor-1-1-1 is in datacenter bad"},
		{"name too long", func() fabric.FloorSpec { s := spec(r11, r12); s.HostPrefix = strings.Repeat("x", 100); return s }(),
			apierr.CodeValidation, "hostPrefix", "longer than 128 characters"},
	}
	hosts, links := client.Host.Query().CountX(ctx), client.Link.Query().CountX(ctx)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := fabric.Build(ctx, client, tt.spec)
			if err == nil {
				t.Fatalf("Build succeeded (%d links), want an error", len(res.Links))
			}
			e, ok := apierr.As(err)
			if !ok {
				t.Fatalf("err = %v (%T), want *apierr.Error", err, err)
			}
			if e.Code != tt.code || e.Field != tt.field || !strings.Contains(e.Message, tt.msg) {
				t.Errorf("err = %s %q %q, want %s %q containing %q", e.Code, e.Field, e.Message, tt.code, tt.field, tt.msg)
			}
		})
	}
	if h, l := client.Host.Query().CountX(ctx), client.Link.Query().CountX(ctx); h != hosts || l != links {
		t.Errorf("failed builds wrote rows: hosts %d -> %d, links %d -> %d", hosts, h, links, l)
	}
}

// checkNoPortInTwoLinks fails when a port is the end of two links (or both ends of one).
func checkNoPortInTwoLinks(t *testing.T) {
	t.Helper()
	var n int
	err := db.QueryRow(`SELECT count(*) FROM (
		SELECT p FROM (SELECT port_link_a AS p FROM links UNION ALL SELECT port_link_b FROM links) ends
		GROUP BY p HAVING count(*) > 1) dup`).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d ports are the end of more than one link", n)
	}
}

// checkNoOverlap fails when two devices of a rack share a unit.
func checkNoOverlap(t *testing.T) {
	t.Helper()
	var n int
	err := db.QueryRow(`SELECT count(*) FROM hosts a JOIN hosts b
		ON a.rack_hosts = b.rack_hosts AND a.id < b.id
		WHERE a.position IS NOT NULL AND b.position IS NOT NULL
		  AND a.position <= b.position + b.height - 1 AND b.position <= a.position + a.height - 1`).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d pairs of devices overlap in a rack", n)
	}
}

// roleOf is h's fabric role, empty when it has none.
func roleOf(h *ent.Host) host.Role {
	if h.Role == nil {
		return ""
	}
	return *h.Role
}
