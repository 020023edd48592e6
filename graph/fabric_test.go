package graph_test

import "testing"

const buildRootMutation = `mutation($in: BuildFabricRootInput!) {
  buildFabricRoot(input: $in) { datacenterID links gateways { name role } floorSpines { name role rack { id } } }
}`

const buildFabricMutation = `mutation($in: BuildFabricInput!) {
  buildFabric(input: $in) {
    floor { id } servers ports links
    floorLeaves { name } rackSpines { name } rackLeaves { name role position rack { id } }
    racks { id } rackZones { name }
  }
}`

// fabricFloor makes a datacenter with one floor holding a network rack and two paired server
// racks (row A, positions 1 and 2) of two servers each.
func fabricFloor(f *fx) (dc, floor, netRack string, racks []string) {
	return fabricFloorNamed(f, uniq("r"))
}

// fabricFloorNamed is fabricFloor with the first server rack named rack1 (the second gets a
// unique name).
func fabricFloorNamed(f *fx, rack1 string) (dc, floor, netRack string, racks []string) {
	dc = f.Datacenter()
	floor = f.Floor(map[string]any{"datacenterID": dc, "name": "floor-1-1-1"})
	netRack = f.Rack(map[string]any{"floorID": floor, "name": "net", "row": "Z", "position": 1})
	for pos := 1; pos <= 2; pos++ {
		name := rack1
		if pos == 2 {
			name = uniq("r")
		}
		rk := f.Rack(map[string]any{"floorID": floor, "name": name, "row": "A", "position": pos})
		for u := 1; u <= 2; u++ {
			f.Host(map[string]any{"rackID": rk, "position": u*2 - 1, "height": 2})
		}
		racks = append(racks, rk)
	}
	return dc, floor, netRack, racks
}

func TestFabricBuildThroughGraphQL(t *testing.T) {
	t.Parallel()
	env, f := newEnv(t)
	dc, floor, netRack, racks := fabricFloorNamed(f, "rack-1-1")
	prefix := uniq("fab") + "-"

	var root struct {
		BuildFabricRoot struct {
			DatacenterID string
			Links        int
			Gateways     []struct{ Name, Role string }
			FloorSpines  []struct {
				Name, Role string
				Rack       struct{ ID string }
			}
		}
	}
	env.MustDo(t, buildRootMutation, map[string]any{"in": map[string]any{
		"datacenterID": dc, "rackID": netRack, "hostPrefix": prefix}}, &root)
	r := root.BuildFabricRoot
	if r.DatacenterID != dc || len(r.Gateways) != 2 || len(r.FloorSpines) != 4 || r.Links != 8 {
		t.Fatalf("root = %+v, want 2 gateways, 4 floor spines, 8 links in datacenter %s", r, dc)
	}
	if r.Gateways[0].Name != prefix+"root-1-gateway-router01" || r.Gateways[0].Role != "GATEWAY_ROUTER" {
		t.Errorf("first gateway = %+v", r.Gateways[0])
	}
	if r.FloorSpines[0].Rack.ID != netRack {
		t.Errorf("floor spine mounted in rack %s, want the network rack %s", r.FloorSpines[0].Rack.ID, netRack)
	}

	var out struct {
		BuildFabric struct {
			Floor                   struct{ ID string }
			Servers, Ports, Links   int
			FloorLeaves, RackSpines []struct{ Name string }
			RackLeaves              []struct {
				Name, Role string
				Position   int
				Rack       struct{ ID string }
			}
			Racks     []struct{ ID string }
			RackZones []struct{ Name string }
		}
	}
	env.MustDo(t, buildFabricMutation, map[string]any{"in": map[string]any{
		"floorID": floor, "networkRackID": netRack, "hostPrefix": prefix}}, &out)
	b := out.BuildFabric
	// 4 servers × 2 uplinks, 4 rack-leaves × 2 rack-spines, 8 rack-spines × 4 floor-leaves,
	// 4 floor-leaves × 4 floor-spines.
	if b.Floor.ID != floor || b.Servers != 4 || b.Links != 8+8+32+16 {
		t.Fatalf("build = servers %d, links %d, want 4 and 64", b.Servers, b.Links)
	}
	if len(b.RackZones) == 1 && b.RackZones[0].Name != "floor-1-1-1-rack-a-1-and-a-2" {
		t.Errorf("rack zone = %q", b.RackZones[0].Name)
	}
	if len(b.FloorLeaves) != 4 || len(b.RackSpines) != 8 || len(b.RackLeaves) != 4 || len(b.Racks) != 2 || len(b.RackZones) != 1 {
		t.Fatalf("build created %d floor leaves, %d rack spines, %d rack leaves, %d racks, %d rack zones",
			len(b.FloorLeaves), len(b.RackSpines), len(b.RackLeaves), len(b.Racks), len(b.RackZones))
	}
	leaf := b.RackLeaves[0]
	if leaf.Name != prefix+"floor-1-1-1-rack-1-1-rack-leaf-router01" ||
		leaf.Role != "RACK_LEAF" || leaf.Rack.ID != racks[0] || leaf.Position != 42 {
		t.Errorf("first rack leaf = %+v, want %sfloor-1-1-1-rack-A-1-rack-leaf-router01 at the top of rack %s", leaf, prefix, racks[0])
	}

	// The links exist: every server has two cabled ports.
	var ports struct {
		Ports struct{ TotalCount int }
	}
	env.MustDo(t, `query($r: [ID!]) { ports(where: {hasHostWith: {hasRackWith: {idIn: $r}, kind: SERVER}, or: [{hasLinkA: true}, {hasLinkB: true}]}) { totalCount } }`,
		map[string]any{"r": racks}, &ports)
	if ports.Ports.TotalCount != 8 {
		t.Errorf("cabled server ports = %d, want 8", ports.Ports.TotalCount)
	}

	// A second build of the same floor is refused and writes nothing.
	env.Do(t, buildFabricMutation, map[string]any{"in": map[string]any{
		"floorID": floor, "networkRackID": netRack, "hostPrefix": prefix}}).ExpectError(t, "CONFLICT", "")
}

func TestFabricBuildBadInput(t *testing.T) {
	t.Parallel()
	env, f := newEnv(t)
	dc, floor, netRack, racks := fabricFloor(f)
	prefix := uniq("fab") + "-"

	// No root routers yet.
	res := env.Do(t, buildFabricMutation, map[string]any{"in": map[string]any{"floorID": floor, "networkRackID": netRack, "hostPrefix": prefix}})
	if len(res.Errors) == 0 {
		t.Fatal("buildFabric without root routers succeeded")
	}
	env.MustDo(t, buildRootMutation, map[string]any{"in": map[string]any{"datacenterID": dc, "hostPrefix": prefix}}, nil)

	cases := []struct {
		name        string
		in          map[string]any
		code, field string
	}{
		{"unknown floor", map[string]any{"floorID": "999999", "networkRackID": netRack}, "NOT_FOUND", ""},
		{"unknown network rack", map[string]any{"floorID": floor, "networkRackID": "999999"}, "VALIDATION", "networkRackID"},
		{"odd number of racks in a row", map[string]any{"floorID": floor, "networkRackID": netRack, "rackIDs": racks[:1]}, "VALIDATION", "rackIDs"},
		{"too many floor leaves", map[string]any{"floorID": floor, "networkRackID": netRack, "floorLeaves": 1000}, "VALIDATION", "floorLeaves"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := c.in
			in["hostPrefix"] = prefix
			env.Do(t, buildFabricMutation, map[string]any{"in": in}).ExpectError(t, c.code, c.field)
		})
	}
	// Nothing was half-written: no rack-leaf routers exist in the racks.
	var hosts struct{ Hosts struct{ TotalCount int } }
	env.MustDo(t, `query($r: [ID!]) { hosts(where: {hasRackWith: {idIn: $r}, role: RACK_LEAF}) { totalCount } }`,
		map[string]any{"r": racks}, &hosts)
	if hosts.Hosts.TotalCount != 0 {
		t.Errorf("failed builds left %d rack-leaf routers behind", hosts.Hosts.TotalCount)
	}
	// A root built twice is a conflict.
	env.Do(t, buildRootMutation, map[string]any{"in": map[string]any{"datacenterID": dc, "hostPrefix": prefix}}).ExpectError(t, "CONFLICT", "")
}
