package graph_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// Fixtures build the records a test needs through GraphQL only (createX mutations), creating
// any required parent on demand: a rack without a floorID gets a new floor, which gets a new
// datacenter, which gets a new region. Names come from a package-wide counter, so fixtures never
// collide with each other or with the rows of other tests in the shared database.

var seq atomic.Int64

// uniq returns prefix-N with a fresh N: a valid slug, unique in this test binary.
func uniq(prefix string) string { return fmt.Sprintf("%s-%d", prefix, seq.Add(1)) }

// uniqCIDR returns a fresh 10.x.y.0/24.
func uniqCIDR() string {
	n := seq.Add(1)
	return fmt.Sprintf("10.%d.%d.0/24", (n>>8)&0xff, n&0xff)
}

// uniqMAC returns a fresh locally administered MAC address in lower-case colon form.
func uniqMAC() string {
	n := seq.Add(1)
	return fmt.Sprintf("02:00:00:%02x:%02x:%02x", (n>>16)&0xff, (n>>8)&0xff, n&0xff)
}

type fx struct {
	t   testing.TB
	env *gqltest.Env
}

func newFx(t testing.TB, env *gqltest.Env) *fx { return &fx{t: t, env: env} }

// input merges extra (later wins) over base.
func input(base map[string]any, extra []map[string]any) map[string]any {
	in := maps.Clone(base)
	for _, e := range extra {
		maps.Copy(in, e)
	}
	return in
}

// need sets in[key] to a new parent made by mk unless the caller already gave one.
func need(in map[string]any, key string, mk func(...map[string]any) string) {
	if _, ok := in[key]; !ok {
		in[key] = mk()
	}
}

// create runs createTyp(input: in) and returns the new id; any error fails the test.
func (f *fx) create(typ string, in map[string]any) string {
	f.t.Helper()
	q := fmt.Sprintf(`mutation($input: Create%sInput!) { create%s(input: $input) { id } }`, typ, typ)
	var out map[string]struct{ ID string }
	f.env.MustDo(f.t, q, map[string]any{"input": in}, &out)
	id := out["create"+typ].ID
	if id == "" {
		f.t.Fatalf("create%s returned no id", typ)
	}
	return id
}

// update runs updateTyp(id, input: in); any error fails the test.
func (f *fx) update(typ, id string, in map[string]any) {
	f.t.Helper()
	q := fmt.Sprintf(`mutation($id: ID!, $input: Update%sInput!) { update%s(id: $id, input: $input) { id } }`, typ, typ)
	f.env.MustDo(f.t, q, map[string]any{"id": id, "input": in}, nil)
}

// tryCreate runs createTyp(input: in) and returns the raw response, for tests expecting errors.
func (f *fx) tryCreate(typ string, in map[string]any) gqltest.Response {
	f.t.Helper()
	q := fmt.Sprintf(`mutation($input: Create%sInput!) { create%s(input: $input) { id } }`, typ, typ)
	return f.env.Do(f.t, q, map[string]any{"input": in})
}

// tryUpdate runs updateTyp(id, input: in) and returns the raw response.
func (f *fx) tryUpdate(typ, id string, in map[string]any) gqltest.Response {
	f.t.Helper()
	q := fmt.Sprintf(`mutation($id: ID!, $input: Update%sInput!) { update%s(id: $id, input: $input) { id } }`, typ, typ)
	return f.env.Do(f.t, q, map[string]any{"id": id, "input": in})
}

// tryDelete runs deleteTyp(id) and returns the raw response.
func (f *fx) tryDelete(typ, id string) gqltest.Response {
	f.t.Helper()
	return f.env.Do(f.t, fmt.Sprintf(`mutation($id: ID!) { delete%s(id: $id) }`, typ), map[string]any{"id": id})
}

// node reads `node(id:)` with the given selection (which should use `... on X { }`) and
// returns the decoded node, or fails the test on any error.
func (f *fx) node(id, selection string) map[string]any {
	f.t.Helper()
	var out struct{ Node map[string]any }
	f.env.MustDo(f.t, `query($id: ID!) { node(id: $id) { id `+selection+` } }`, map[string]any{"id": id}, &out)
	if out.Node == nil {
		f.t.Fatalf("node(%s) is null", id)
	}
	return out.Node
}

// --- the physical topology ---

func (f *fx) Region(extra ...map[string]any) string {
	return f.create("Region", input(map[string]any{"name": uniq("region")}, extra))
}

func (f *fx) Datacenter(extra ...map[string]any) string {
	in := input(map[string]any{"name": uniq("dc")}, extra)
	need(in, "regionID", f.Region)
	return f.create("Datacenter", in)
}

func (f *fx) Floor(extra ...map[string]any) string {
	in := input(map[string]any{"name": uniq("floor")}, extra)
	need(in, "datacenterID", f.Datacenter)
	return f.create("Floor", in)
}

func (f *fx) Rack(extra ...map[string]any) string {
	in := input(map[string]any{"name": uniq("rack")}, extra)
	need(in, "floorID", f.Floor)
	return f.create("Rack", in)
}

// Host makes an unmounted host unless extra gives a rackID (and position).
func (f *fx) Host(extra ...map[string]any) string {
	return f.create("Host", input(map[string]any{"name": uniq("host")}, extra))
}

func (f *fx) Port(extra ...map[string]any) string {
	in := input(map[string]any{"name": uniq("eth")}, extra)
	need(in, "hostID", f.Host)
	return f.create("Port", in)
}

func (f *fx) PowerZone(extra ...map[string]any) string {
	in := input(map[string]any{"name": uniq("pz")}, extra)
	need(in, "datacenterID", f.Datacenter)
	return f.create("PowerZone", in)
}

// Network creates a network, in a routing scope (vrf) of its own unless extra names one, so
// that tests may reuse prefixes (prefixes of one scope must not overlap).
func (f *fx) Network(extra ...map[string]any) string {
	return f.create("Network", input(map[string]any{"name": uniq("net"), "cidr": uniqCIDR(), "vrf": uniq("vrf")}, extra))
}

// --- compute ---

func (f *fx) Cluster(extra ...map[string]any) string {
	in := input(map[string]any{"name": uniq("cluster")}, extra)
	if _, ok := in["datacenterID"]; !ok {
		region := f.Region()
		if r, ok := in["regionID"].(string); ok {
			region = r
		}
		in["regionID"] = region
		in["datacenterID"] = f.Datacenter(map[string]any{"regionID": region})
	}
	return f.create("Cluster", in)
}

func (f *fx) ComputeNode(extra ...map[string]any) string {
	in := input(map[string]any{"name": uniq("node")}, extra)
	need(in, "hostID", f.Host)
	need(in, "clusterID", f.Cluster)
	return f.create("ComputeNode", in)
}

func (f *fx) HostGroup(extra ...map[string]any) string {
	return f.create("HostGroup", input(map[string]any{"name": uniq("hg")}, extra))
}

func (f *fx) Flavor(extra ...map[string]any) string {
	return f.create("Flavor", input(map[string]any{"name": uniq("flavor"), "vcpus": 2, "memoryMB": 2048}, extra))
}

func (f *fx) Image(extra ...map[string]any) string {
	return f.create("Image", input(map[string]any{"name": uniq("image"), "source": "https://images.example.com/noble.qcow2"}, extra))
}

func (f *fx) Provider(extra ...map[string]any) string {
	return f.create("Provider", input(map[string]any{"name": uniq("provider"), "kind": "VIRTUAL_MACHINE", "driver": "LIBVIRT"}, extra))
}

func (f *fx) ServiceMesh(extra ...map[string]any) string {
	return f.create("ServiceMesh", input(map[string]any{"name": uniq("mesh")}, extra))
}

// --- people and tenancy ---

func (f *fx) Tenant(extra ...map[string]any) string {
	return f.create("Tenant", input(map[string]any{"name": uniq("tenant")}, extra))
}

func (f *fx) User(extra ...map[string]any) string {
	return f.create("User", input(map[string]any{"username": uniq("user")}, extra))
}

func (f *fx) Maintainer(extra ...map[string]any) string {
	return f.create("Maintainer", input(map[string]any{"name": "Ops Person", "account": uniq("ops")}, extra))
}

// --- virtual resources ---

// VirtualMachine creates a VM, which is placed at once: without a regionID it goes to a new
// PlaceableRegion.
func (f *fx) VirtualMachine(extra ...map[string]any) string {
	in := input(map[string]any{"name": uniq("vm")}, extra)
	need(in, "tenantID", f.Tenant)
	need(in, "regionID", f.PlaceableRegion)
	need(in, "flavorID", f.Flavor)
	return f.create("VirtualMachine", in)
}

// RegionService creates a region service and its replicas (1 unless extra says): without a
// regionID in a new PlaceableRegion, without a flavorID of a new flavor.
func (f *fx) RegionService(extra ...map[string]any) string {
	in := input(map[string]any{"name": uniq("svc")}, extra)
	need(in, "tenantID", f.Tenant)
	need(in, "regionID", f.PlaceableRegion)
	need(in, "flavorID", f.Flavor)
	return f.create("RegionService", in)
}

// PlaceableRegion makes a region (or uses extra's regionID) with a cluster holding one Ready,
// schedulable node of ample capacity, so that VMs created there can be placed.
func (f *fx) PlaceableRegion(extra ...map[string]any) string {
	f.t.Helper()
	in := input(map[string]any{}, extra)
	need(in, "regionID", f.Region)
	region := in["regionID"].(string)
	f.ReadyNode(map[string]any{"clusterID": f.Cluster(map[string]any{"regionID": region})})
	return region
}

// ReadyNode makes a compute node (of ample capacity unless extra says otherwise) and marks it
// Ready, as its agent's heartbeat would.
func (f *fx) ReadyNode(extra ...map[string]any) string {
	f.t.Helper()
	id := f.ComputeNode(input(map[string]any{"cpuCapacity": 4096, "memoryCapacityMB": 1 << 24, "diskCapacityGB": 1 << 20}, extra))
	f.env.Client.ComputeNode.UpdateOneID(atoi(f.t, id)).SetStatus(computenode.StatusReady).ExecX(gqltest.System())
	return id
}

// atoi turns a GraphQL ID into an ent id for env.Client.
func atoi(t testing.TB, id string) int {
	t.Helper()
	n, err := strconv.Atoi(id)
	if err != nil {
		t.Fatalf("id %q is not an int: %v", id, err)
	}
	return n
}

// jsonEqual compares a decoded JSON value with an expected Go value by their JSON encodings,
// so 3 and 3.0 (float64 after decoding) compare equal.
func jsonEqual(got, want any) bool {
	g, err1 := json.Marshal(got)
	w, err2 := json.Marshal(want)
	return err1 == nil && err2 == nil && string(g) == string(w)
}

// connection is the shape of a Relay connection in responses.
type connection struct {
	TotalCount int `json:"totalCount"`
	PageInfo   struct {
		HasNextPage     bool   `json:"hasNextPage"`
		HasPreviousPage bool   `json:"hasPreviousPage"`
		StartCursor     string `json:"startCursor"`
		EndCursor       string `json:"endCursor"`
	} `json:"pageInfo"`
	Edges []struct {
		Cursor string         `json:"cursor"`
		Node   map[string]any `json:"node"`
	} `json:"edges"`
}

// ids returns the ids of the connection's nodes, in order.
func (c connection) ids() []string {
	out := make([]string, len(c.Edges))
	for i, e := range c.Edges {
		out[i], _ = e.Node["id"].(string)
	}
	return out
}

// strs returns field of every node, in order.
func (c connection) strs(field string) []string {
	out := make([]string, len(c.Edges))
	for i, e := range c.Edges {
		out[i] = fmt.Sprint(e.Node[field])
	}
	return out
}
