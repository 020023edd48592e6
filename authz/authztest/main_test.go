// Package authztest tests VirtFlow's authorization end to end, through the real HTTP handler
// and a real PostgreSQL database: the role matrix of every entity the GraphQL schema exposes,
// tenant isolation, the audit log of every mutation, and API tokens.
//
// The expected answers come from a small table per role (policyModel below) that mirrors the
// groups of authz/policy.go; TestPolicyTableMatchesCasbin checks the table against the Casbin
// policy itself, and the matrix checks the API against the table, so a disagreement between
// the policy and what the API does fails a generated case.
package authztest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/identity"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/apitoken"
	"github.com/virtflow/virtflow/ent/computenode"
	"github.com/virtflow/virtflow/ent/user"
	"github.com/virtflow/virtflow/ent/virtualmachine"
	"github.com/virtflow/virtflow/graph"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// TestMain gives the package its own PostgreSQL database. Tests share it; every fixture has a
// unique name (uniq) and every assertion looks only at rows the test made.
func TestMain(m *testing.M) { testdb.Main(m) }

var seq atomic.Int64

// uniq returns prefix-N with a fresh N: a valid slug, unique in this test binary.
func uniq(prefix string) string { return fmt.Sprintf("%s-%d", prefix, seq.Add(1)) }

// uniqCIDR returns a fresh 10.x.y.0/24 (x < 200: 10.200.0.0/16 is tenant A's network).
func uniqCIDR() string {
	n := seq.Add(1)
	return fmt.Sprintf("10.%d.%d.0/24", (n>>8)%200, n&0xff)
}

var schemaOnce = sync.OnceValue(func() *ast.Schema { return graph.NewSchema(nil, nil).Schema() })

// gqlSchema is the executable schema the handler serves.
func gqlSchema() *ast.Schema { return schemaOnce() }

// nodeTypes are the names of every GraphQL type implementing Node, sorted: the entity types.
func nodeTypes() []string {
	s := gqlSchema()
	var out []string
	for _, d := range s.GetPossibleTypes(s.Types["Node"]) {
		out = append(out, d.Name)
	}
	sort.Strings(out)
	return out
}

// connectionField is the Query field listing typ (racks for Rack), or nil.
func connectionField(typ string) *ast.FieldDefinition {
	for _, f := range gqlSchema().Query.Fields {
		if f.Type.Name() == typ+"Connection" {
			return f
		}
	}
	return nil
}

// mutationField is the Mutation field called name, or nil.
func mutationField(name string) *ast.FieldDefinition {
	return gqlSchema().Mutation.Fields.ForName(name)
}

// --- HTTP ---

// call is one GraphQL request over the HTTP handler.
type call struct {
	token      string // bearer token; empty sends no Authorization header
	query      string
	vars       map[string]any
	requestID  string          // X-Request-ID, when set
	remoteAddr string          // the client address, when set (httptest's default is 192.0.2.1:1234)
	header     http.Header     // further headers
	ctx        context.Context // the request's context, when set
}

// send posts c to /query and decodes the answer; it fails the test only when the body is not
// a GraphQL response.
func send(tb testing.TB, h http.Handler, c call) gqltest.Response {
	tb.Helper()
	body, _ := json.Marshal(map[string]any{"query": c.query, "variables": c.vars})
	req := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
	if c.ctx != nil {
		req = req.WithContext(c.ctx)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, vs := range c.header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.requestID != "" {
		req.Header.Set("X-Request-ID", c.requestID)
	}
	if c.remoteAddr != "" {
		req.RemoteAddr = c.remoteAddr
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var r gqltest.Response
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		tb.Fatalf("decode response (HTTP %d): %v: %s", rec.Code, err, rec.Body.String())
	}
	r.Status = rec.Code
	return r
}

// codes are the extensions.code values of r's errors, in order.
func codes(r gqltest.Response) []string {
	var out []string
	for _, e := range r.Errors {
		out = append(out, e.Code())
	}
	return out
}

// onlyCode reports whether r failed, and failed only with code.
func onlyCode(r gqltest.Response, code string) bool {
	if len(r.Errors) == 0 {
		return false
	}
	for _, e := range r.Errors {
		if e.Code() != code {
			return false
		}
	}
	return true
}

// mustData fails the test on any error and decodes r's data into out.
func mustData(tb testing.TB, r gqltest.Response, out any) {
	tb.Helper()
	if len(r.Errors) > 0 {
		tb.Fatalf("unexpected errors (HTTP %d): %s", r.Status, r.ErrorsString())
	}
	if out != nil {
		if err := json.Unmarshal(r.Data, out); err != nil {
			tb.Fatalf("decode data: %v: %s", err, r.Data)
		}
	}
}

// gid formats an ent id as a GraphQL ID.
func gid(id int) string { return fmt.Sprint(id) }

// --- the world: shared fixtures, written directly through ent as the system ---

// world is a database with the handler over it and the records every test builds on: one
// region with its datacenter, floor, cluster and zone; tenants A and B; nodes N1 and N2; the
// maintainers M1 (responsible for the maintained fixtures) and M2 (responsible for something
// else); and a user with a token for every viewer of the matrix.
type world struct {
	tb  testing.TB
	env *gqltest.Env
	c   *ent.Client
	ctx context.Context // the system viewer

	region, az, dc, floor, cluster, hostGroup, provider, flavor, image int
	tenantA, tenantB                                                   int
	m1, m2                                                             int
	hostM                                                              int // a host M1 maintains
	node1, node2                                                       int
	spare                                                              int // a Ready node with room, where GraphQL creates place VMs
	vm1                                                                int // tenant A's VM on N1
	vmPort                                                             int // a port of vm1
	// gonePort is a NIC of a DELETED VM of tenant A on node1: the matrix's addresses hang on
	// it, since an address a live VM uses cannot be deleted (ipam.BoundHook).
	gonePort int
	netA     int // tenant A's network, 10.200.0.0/16
	ipNext   atomic.Int64

	adminID, adminTokenID int
	viewers               []*viewer
}

func newWorld(tb testing.TB) *world {
	tb.Helper()
	env := gqltest.Postgres(tb, testdb.DSN(tb))
	w := &world{tb: tb, env: env, c: env.Client, ctx: gqltest.System()}
	c, ctx := w.c, w.ctx

	w.region = c.Region.Create().SetName(uniq("region")).SaveX(ctx).ID
	w.az = c.AvailabilityZone.Create().SetName(uniq("az")).SetRegionID(w.region).SaveX(ctx).ID
	w.dc = c.Datacenter.Create().SetName(uniq("dc")).SetRegionID(w.region).SaveX(ctx).ID
	w.floor = c.Floor.Create().SetName(uniq("floor")).SetDatacenterID(w.dc).SaveX(ctx).ID
	w.cluster = c.Cluster.Create().SetName(uniq("cluster")).SetRegionID(w.region).SetDatacenterID(w.dc).SaveX(ctx).ID
	w.hostGroup = c.HostGroup.Create().SetName(uniq("hg")).SaveX(ctx).ID
	w.provider = c.Provider.Create().SetName(uniq("provider")).SetKind("VIRTUAL_MACHINE").SetDriver("LIBVIRT").SaveX(ctx).ID
	w.flavor = c.Flavor.Create().SetName(uniq("flavor")).SetVcpus(1).SetMemoryMB(1024).SaveX(ctx).ID
	w.image = c.Image.Create().SetName(uniq("image")).SetSource("https://images.example.com/x.qcow2").SaveX(ctx).ID
	w.tenantA = c.Tenant.Create().SetName(uniq("tenant-a")).SaveX(ctx).ID
	w.tenantB = c.Tenant.Create().SetName(uniq("tenant-b")).SaveX(ctx).ID
	w.m1 = c.Maintainer.Create().SetName("M One").SetAccount(uniq("m1")).SaveX(ctx).ID
	w.m2 = c.Maintainer.Create().SetName("M Two").SetAccount(uniq("m2")).SaveX(ctx).ID
	// M2 is a real maintainer, of something else than the fixtures.
	c.Host.Create().SetName(uniq("host-m2")).AddMaintainerIDs(w.m2).SaveX(ctx)
	w.hostM = c.Host.Create().SetName(uniq("host-m1")).AddMaintainerIDs(w.m1).AddHostGroupIDs(w.hostGroup).SaveX(ctx).ID
	w.node1 = w.newNode(w.m1)
	w.node2 = w.newNode(0)
	// createVirtualMachine and createRegionService place what they create: give them room.
	w.spare = w.newNode(0)
	c.ComputeNode.UpdateOneID(w.spare).SetStatus(computenode.StatusReady).
		SetCPUCapacity(1 << 20).SetMemoryCapacityMB(1 << 40).SetDiskCapacityGB(1 << 40).ExecX(ctx)
	w.vm1 = w.newVM(w.tenantA, w.node1)
	w.vmPort = c.Port.Create().SetName(uniq("vnic")).SetVirtualMachineID(w.vm1).SaveX(ctx).ID
	gone := w.newVM(w.tenantA, w.node1)
	c.VirtualMachine.UpdateOneID(gone).SetStatus(virtualmachine.StatusDeleted).ExecX(ctx)
	w.gonePort = c.Port.Create().SetName(uniq("vnic")).SetVirtualMachineID(gone).SaveX(ctx).ID
	w.netA = c.Network.Create().SetName(uniq("net-a")).SetCidr("10.200.0.0/16").SetVrf(uniq("vrf")).SetTenantID(w.tenantA).SaveX(ctx).ID

	admin := c.User.Query().Where(user.Username(identity.AdminUsername)).OnlyX(ctx)
	w.adminID = admin.ID
	w.adminTokenID = c.APIToken.Query().Where(apitoken.TokenHash(identity.HashToken(gqltest.AdminToken))).OnlyIDX(ctx)
	w.viewers = w.makeViewers()
	return w
}

// newNode makes a compute node in the cluster and zone on a host of its own, maintained by
// maintainer m (none when 0).
func (w *world) newNode(m int) int {
	host := w.c.Host.Create().SetName(uniq("node-host")).SaveX(w.ctx).ID
	q := w.c.ComputeNode.Create().SetName(uniq("node")).SetHostID(host).SetClusterID(w.cluster).SetAvailabilityZoneID(w.az)
	if m != 0 {
		q.AddMaintainerIDs(m)
	}
	return q.SaveX(w.ctx).ID
}

// newVM makes a VM of tenant on node, maintained by M1.
func (w *world) newVM(tenant, node int) int {
	return w.c.VirtualMachine.Create().SetName(uniq("vm")).SetTenantID(tenant).SetRegionID(w.region).
		SetFlavorID(w.flavor).SetImageID(w.image).SetClusterID(w.cluster).SetNodeID(node).
		AddMaintainerIDs(w.m1).SaveX(w.ctx).ID
}

// ownerOf says whom a shared fixture belongs to.
func (w *world) ownerOf(id int) owner {
	switch id {
	case w.tenantA, w.tenantB:
		return owner{tenant: id}
	case w.node1:
		return owner{node: id, maintainer: w.m1}
	case w.node2:
		return owner{node: id}
	case w.vm1:
		return owner{tenant: w.tenantA, node: w.node1, maintainer: w.m1}
	case w.vmPort, w.gonePort:
		return owner{tenant: w.tenantA, node: w.node1}
	case w.netA:
		return owner{tenant: w.tenantA}
	case w.hostM:
		return owner{maintainer: w.m1}
	}
	return owner{}
}

// nextIP returns a fresh address of tenant A's network.
func (w *world) nextIP() string {
	n := w.ipNext.Add(1)
	return fmt.Sprintf("10.200.%d.%d", n/250, n%250+2)
}

// newUser makes an active user, a member of the given tenants.
func (w *world) newUser(prefix string, tenants ...int) int {
	return w.c.User.Create().SetUsername(uniq(prefix)).AddTenantIDs(tenants...).SaveX(w.ctx).ID
}

// grant gives user the role through identity.GrantRole, as the system.
func (w *world) grant(userID int, role authz.Role, tenant, node int) {
	w.tb.Helper()
	var tp, np *int
	if tenant != 0 {
		tp = &tenant
	}
	if node != 0 {
		np = &node
	}
	if _, err := w.env.Identity.GrantRole(authz.SystemContext(context.Background(), "test"), userID, role, tp, np); err != nil {
		w.tb.Fatalf("grant %s to user %d: %v", role, userID, err)
	}
}

// tokenOpts shape a token minted by mintToken.
type tokenOpts struct {
	readOnly bool
	tenant   int
	expires  *time.Time
	revoked  bool
	cidrs    []string
}

// mintToken stores a token for userID the way identity does (identity.NewToken: only the hash
// and the display prefix are kept) and returns its plaintext and id.
func (w *world) mintToken(userID int, o tokenOpts) (string, int) {
	w.tb.Helper()
	plain, hash, prefix := identity.NewToken(apitoken.KindApi)
	q := w.c.APIToken.Create().SetName(uniq("token")).SetTokenHash(hash).SetPrefix(prefix).
		SetKind(apitoken.KindApi).SetScope(apitoken.ScopeReadWrite).SetOwnerID(userID).SetNillableExpiresAt(o.expires)
	if o.readOnly {
		q.SetScope(apitoken.ScopeReadOnly)
	}
	if o.tenant != 0 {
		q.SetTenantID(o.tenant)
	}
	if o.revoked {
		q.SetRevokedAt(time.Now().Add(-time.Minute))
	}
	if len(o.cidrs) > 0 {
		q.SetAllowedCidrs(o.cidrs)
	}
	t := q.SaveX(w.ctx)
	return plain, t.ID
}

// viewer returns a viewer of the matrix by name.
func (w *world) viewer(name string) *viewer {
	for _, v := range w.viewers {
		if v.name == name {
			return v
		}
	}
	w.tb.Fatalf("no viewer %q", name)
	return nil
}

// do sends a request as v.
func (w *world) do(tb testing.TB, v *viewer, query string, vars map[string]any) gqltest.Response {
	tb.Helper()
	return send(tb, w.env.Handler, call{token: v.token, query: query, vars: vars})
}

// --- viewers ---

// viewer is one caller of the matrix and what it holds, in the terms of the policy model.
type viewer struct {
	name       string
	token      string
	userID     int
	platform   []authz.Role // roles in the platform domain
	tenantRole authz.Role   // a tenant role, in tenant
	tenant     int
	agentNode  int // the node the agent role is bound to
	maintainer int // the maintainer the user is linked to
	anonymous  bool
}

func (w *world) makeViewers() []*viewer {
	past := time.Now().Add(-time.Hour)
	platformUser := func(name string, role authz.Role, maintainer int) *viewer {
		id := w.newUser(name)
		w.grant(id, role, 0, 0)
		if maintainer != 0 {
			w.c.User.UpdateOneID(id).SetMaintainerID(maintainer).ExecX(w.ctx)
		}
		tok, _ := w.mintToken(id, tokenOpts{})
		return &viewer{name: name, token: tok, userID: id, platform: []authz.Role{role}, maintainer: maintainer}
	}
	tenantUser := func(name string, role authz.Role, tenant int) *viewer {
		id := w.newUser(name, tenant)
		w.grant(id, role, tenant, 0)
		tok, _ := w.mintToken(id, tokenOpts{})
		return &viewer{name: name, token: tok, userID: id, tenantRole: role, tenant: tenant}
	}
	agent := func(name string, node int) *viewer {
		id := w.newUser(name)
		w.grant(id, authz.RoleAgent, 0, node)
		tok, _ := w.mintToken(id, tokenOpts{})
		return &viewer{name: name, token: tok, userID: id, agentNode: node}
	}
	// The expired and revoked tokens belong to an admin: if either worked, it would work for
	// everything.
	lapsed := w.newUser("lapsed-admin")
	w.grant(lapsed, authz.RoleAdmin, 0, 0)
	expired, _ := w.mintToken(lapsed, tokenOpts{expires: &past})
	revoked, _ := w.mintToken(lapsed, tokenOpts{revoked: true})

	return []*viewer{
		{name: "admin", token: gqltest.AdminToken, userID: w.adminID, platform: []authz.Role{authz.RoleAdmin}},
		platformUser("operator", authz.RoleOperator, 0),
		platformUser("viewer", authz.RoleViewer, 0),
		platformUser("maintainer-own", authz.RoleMaintainer, w.m1),
		platformUser("maintainer-other", authz.RoleMaintainer, w.m2),
		tenantUser("tenant-admin", authz.RoleTenantAdmin, w.tenantA),
		tenantUser("tenant-member", authz.RoleTenantMember, w.tenantA),
		tenantUser("member-other-tenant", authz.RoleTenantMember, w.tenantB),
		agent("agent-own-node", w.node1),
		agent("agent-other-node", w.node2),
		{name: "no-token", anonymous: true},
		{name: "expired-token", token: expired, anonymous: true},
		{name: "revoked-token", token: revoked, anonymous: true},
	}
}

// --- the policy model: what authz/policy.go says, as a table per role ---

var (
	catalog         = []string{"Region", "AvailabilityZone", "Flavor", "Image", "ServiceMesh", "Provider"}
	topology        = []string{"Datacenter", "Floor", "Rack", "PowerZone", "NetworkZone", "RackZone", "Host", "HostGroup", "Port", "Link", "Network", "IPAddress", "IPRange"}
	compute         = []string{"Cluster", "ComputeNode", "Assignment"}
	operations      = []string{"Event", "EventRule", "Alert", "Maintenance", "Notice", "Check", "Silence", "HookDelivery"}
	tenancy         = []string{"Tenant", "Quota", "UsageRecord"}
	tenantResources = []string{"VirtualMachine", "Volume", "Snapshot", "Backup", "LoadBalancer", "RegionService", "GlobalService", "KubernetesCluster", "SSHKey", "SecurityRule"}
	maintainers     = []string{"Maintainer", "MaintainerGroup"}
	maintained      = []string{"Host", "Rack", "ComputeNode", "Cluster", "VirtualMachine", "KubernetesCluster", "Alert"}

	// tenantScoped are the types whose rows belong to tenants (authz.tenantScope); a tenant
	// role that reads or writes one sees or changes only its tenants' rows.
	tenantScoped = []string{"Tenant", "User", "AuditLog", "Notice", "Alert", "Port", "IPAddress", "VirtualMachine", "Volume", "Snapshot", "Backup",
		"LoadBalancer", "RegionService", "GlobalService", "KubernetesCluster", "Quota", "UsageRecord", "Network", "APIToken", "RoleBinding", "SSHKey", "SecurityRule"}
	// nodeScoped are the types whose rows belong to nodes (authz.nodeScope).
	nodeScoped = []string{"ComputeNode", "Assignment", "VirtualMachine", "Volume", "Snapshot", "Backup", "Event", "Port", "IPAddress", "SecurityRule"}
	// selfScoped are the types every user reads its own rows of (authz.selfScope).
	selfScoped = []string{"User", "APIToken", "RoleBinding", "Notice", "SSHKey"}
)

func cat(groups ...[]string) []string {
	var out []string
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// grants is what a role may do to which types: "*" stands for every type.
type grants struct{ read, write, writeOwn []string }

func (g grants) may(act, typ string) bool {
	var list []string
	switch act {
	case authz.ActRead:
		list = g.read
	case authz.ActWrite:
		list = g.write
	case authz.ActWriteOwn:
		list = g.writeOwn
	}
	return slices.Contains(list, "*") || slices.Contains(list, typ)
}

var viewerReads = cat(catalog, topology, compute, operations, tenancy, tenantResources, maintainers)

// policyModel is the expected policy: platform roles in the platform domain, tenant roles in
// their tenant, the agent in its node.
var policyModel = map[authz.Role]grants{
	authz.RoleAdmin:        {read: []string{"*"}, write: []string{"*"}, writeOwn: []string{"*"}},
	authz.RoleOperator:     {read: cat(viewerReads, []string{"User"}), write: cat(catalog, topology, compute, operations, maintainers)},
	authz.RoleViewer:       {read: viewerReads},
	authz.RoleMaintainer:   {read: viewerReads, writeOwn: maintained},
	authz.RoleTenantMember: {read: cat(catalog, tenancy, tenantResources, []string{"Notice", "Network", "Port", "IPAddress", "Alert"}), write: tenantResources},
	authz.RoleTenantAdmin: {
		read:  cat(catalog, tenancy, tenantResources, []string{"Notice", "Network", "Port", "IPAddress", "Alert"}, []string{"AuditLog", "User", "RoleBinding", "APIToken"}),
		write: cat(tenantResources, []string{"RoleBinding"}),
	},
	authz.RoleAgent: {
		read:  []string{"ComputeNode", "Assignment", "VirtualMachine", "Volume", "Snapshot", "Backup", "Flavor", "Image", "Port", "IPAddress", "SecurityRule"},
		write: []string{"ComputeNode", "Assignment", "Event"},
	},
}

// outcome is what the API should answer.
type outcome string

const (
	allowed  outcome = "allowed"         // read: the row is there; write: it happens
	hidden   outcome = "hidden"          // filtered out: not in lists, NOT_FOUND by id, not changed
	denied   outcome = "FORBIDDEN"       // the type is off limits
	unauthed outcome = "UNAUTHENTICATED" // no valid credentials
)

// owner says whom a record belongs to, for the scoped rules.
type owner struct {
	tenant     int  // the tenant the row belongs to (a Tenant: itself; a User: the tenant it is a member of)
	allTenants bool // a notice to everyone
	node       int  // the node the row belongs to (a ComputeNode: itself)
	maintainer int  // the maintainer responsible for it (an Alert: for its host)
}

func (v *viewer) platformMay(act, typ string) bool {
	for _, r := range v.platform {
		if policyModel[r].may(act, typ) {
			return true
		}
	}
	return false
}

// read is what v should see of a row of typ owned by o (authz.filterQuery).
func (v *viewer) read(typ string, o owner) outcome {
	if v.anonymous {
		return unauthed
	}
	if v.platformMay(authz.ActRead, typ) {
		return allowed
	}
	// Every signed-in user reads its own user, tokens, role bindings and notices (selfScope):
	// other users' rows are filtered out, not forbidden.
	scoped, match := slices.Contains(selfScoped, typ), false
	if v.tenantRole != "" && policyModel[v.tenantRole].may(authz.ActRead, typ) {
		if slices.Contains(catalog, typ) {
			return allowed
		}
		if slices.Contains(tenantScoped, typ) {
			scoped = true
			match = match || o.allTenants || o.tenant == v.tenant
		}
	}
	if v.agentNode != 0 && policyModel[authz.RoleAgent].may(authz.ActRead, typ) {
		if slices.Contains(catalog, typ) {
			return allowed
		}
		if slices.Contains(nodeScoped, typ) {
			scoped = true
			match = match || o.node == v.agentNode
		}
	}
	switch {
	case !scoped:
		return denied
	case match:
		return allowed
	}
	return hidden
}

// delete is what should come of v deleting a row of typ owned by o: a row v cannot see is
// not found (its existence is not revealed), one v may not read at all is forbidden, and
// otherwise the write rules decide.
func (v *viewer) delete(typ string, o owner) outcome {
	switch r := v.read(typ, o); r {
	case unauthed, denied, hidden:
		return r
	}
	return v.write(typ, o, false)
}

// write is what should come of v creating (o is then what the input names), updating or
// deleting a row of typ owned by o (authz.checkMutation).
func (v *viewer) write(typ string, o owner, create bool) outcome {
	if v.anonymous {
		return unauthed
	}
	if v.platformMay(authz.ActWrite, typ) {
		return allowed
	}
	if !create && v.maintainer != 0 && v.platformMay(authz.ActWriteOwn, typ) {
		if o.maintainer == v.maintainer {
			return allowed
		}
		return hidden
	}
	if v.tenantRole != "" && policyModel[v.tenantRole].may(authz.ActWrite, typ) {
		switch {
		case create && o.tenant == v.tenant:
			return allowed
		case create || !slices.Contains(tenantScoped, typ):
			return denied
		case o.tenant == v.tenant:
			return allowed
		}
		return hidden
	}
	if v.agentNode != 0 && policyModel[authz.RoleAgent].may(authz.ActWrite, typ) {
		switch {
		case create && o.node == v.agentNode:
			return allowed
		case create || !slices.Contains(nodeScoped, typ):
			return denied
		case o.node == v.agentNode:
			return allowed
		}
		return hidden
	}
	return denied
}

// checkOutcome asserts r answered want: denied and unauthed must fail with exactly that
// code; for allowed and hidden, ok tells from the response which it was.
func checkOutcome(t *testing.T, what string, r gqltest.Response, want outcome, ok func() (outcome, string)) {
	t.Helper()
	switch want {
	case denied, unauthed:
		if !onlyCode(r, string(want)) {
			t.Errorf("%s: want %s, got HTTP %d data %s errors %s", what, want, r.Status, r.Data, r.ErrorsString())
		}
		return
	}
	got, detail := ok()
	if got != want {
		t.Errorf("%s: want %s, got %s (%s; HTTP %d errors %s)", what, want, got, detail, r.Status, r.ErrorsString())
	}
}

// jsonString renders v for a failure message.
func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// containsAny returns the first of needles (ignoring empty ones) that s contains, or "".
func containsAny(s string, needles ...string) string {
	for _, n := range needles {
		if n != "" && strings.Contains(s, n) {
			return n
		}
	}
	return ""
}
