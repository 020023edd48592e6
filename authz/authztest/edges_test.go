package authztest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"entgo.io/ent/entql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/identity"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/alert"
	"github.com/virtflow/virtflow/graph"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// TestEdgeWriteExploits replays the two reported writes that linked someone else's record:
// a maintainer of A's VM attaching B's volume to it, and a maintainer of a host taking over
// an alert of another node (and then closing it).
func TestEdgeWriteExploits(t *testing.T) {
	w := newWorld(t)
	c, ctx := w.c, w.ctx
	m := w.viewer("maintainer-own")

	t.Run("maintainer attaches another tenant's volume to a VM it maintains", func(t *testing.T) {
		vm := w.newVM(w.tenantA, w.node1)
		vol := c.Volume.Create().SetName(uniq("vol")).SetSizeGB(5).SetTenantID(w.tenantB).SaveX(ctx).ID
		r := w.do(t, m, `mutation($id: ID!, $v: ID!) { updateVirtualMachine(id: $id, input: {addVolumeIDs: [$v]}) { id } }`,
			map[string]any{"id": gid(vm), "v": gid(vol)})
		if !onlyCode(r, "FORBIDDEN") {
			t.Errorf("updateVirtualMachine(addVolumeIDs: [B's volume]) as the VM's maintainer: want FORBIDDEN, got %s %s", r.Data, r.ErrorsString())
		}
		if msg := volumeVM(w, vol, 0)(); msg != "" {
			t.Error(msg)
		}
	})
	t.Run("maintainer of a host takes over and closes another node's alert", func(t *testing.T) {
		other := c.Alert.Create().SetName(uniq("alert")).SetSeverity(alert.SeverityWarning).SetNodeID(w.node2).SaveX(ctx).ID
		r := w.do(t, m, `mutation($id: ID!, $a: ID!) { updateHost(id: $id, input: {addAlertIDs: [$a]}) { id } }`,
			map[string]any{"id": gid(w.hostM), "a": gid(other)})
		if !onlyCode(r, "FORBIDDEN") {
			t.Errorf("updateHost(addAlertIDs: [another node's alert]) as the host's maintainer: want FORBIDDEN, got %s %s", r.Data, r.ErrorsString())
		}
		if hosts := c.Alert.GetX(ctx, other).QueryHost().IDsX(ctx); len(hosts) > 0 {
			t.Errorf("the other node's alert %d now belongs to host %v", other, hosts)
		}
		r = w.do(t, m, `mutation($id: ID!) { closeAlert(id: $id) { id status } }`, map[string]any{"id": gid(other)})
		if len(r.Errors) == 0 {
			t.Errorf("closeAlert(the other node's alert) as the host's maintainer: want refused, got %s", r.Data)
		}
		if a := c.Alert.GetX(ctx, other); a.Status != alert.StatusOpen {
			t.Errorf("the other node's alert %d is %s", other, a.Status)
		}
	})
	t.Run("operator unlinks a VM from its node", func(t *testing.T) {
		// Operators write compute, not tenants' VMs: clearing a node's VMs unlinks them.
		node := w.newNode(0)
		vm := w.newVM(w.tenantA, node)
		r := w.do(t, w.viewer("operator"), `mutation($id: ID!) { updateComputeNode(id: $id, input: {clearVirtualMachines: true}) { id } }`,
			map[string]any{"id": gid(node)})
		if !onlyCode(r, "FORBIDDEN") {
			t.Errorf("updateComputeNode(clearVirtualMachines) as operator: want FORBIDDEN, got %s %s", r.Data, r.ErrorsString())
		}
		if n := c.VirtualMachine.GetX(ctx, vm).QueryNode().CountX(ctx); n != 1 {
			t.Errorf("VM %d lost its node", vm)
		}
	})
	t.Run("the maintainer still links what it maintains", func(t *testing.T) {
		mine := c.Alert.Create().SetName(uniq("alert")).SetSeverity(alert.SeverityWarning).SetNodeID(w.node1).SaveX(ctx).ID
		r := w.do(t, m, `mutation($id: ID!, $a: ID!) { updateHost(id: $id, input: {addAlertIDs: [$a]}) { id } }`,
			map[string]any{"id": gid(w.hostM), "a": gid(mine)})
		mustData(t, r, nil)
		if hosts := c.Alert.GetX(ctx, mine).QueryHost().IDsX(ctx); len(hosts) != 1 || hosts[0] != w.hostM {
			t.Errorf("alert %d of M1's node: host = %v, want %d", mine, hosts, w.hostM)
		}
	})
}

// edgeInput is one input field of a generated create or update mutation that adds, removes
// or clears an edge.
type edgeInput struct {
	src, edge string // the type the mutation changes and the ent edge
	info      ent.EdgeInfo
	op        string // create or update
	field     string // the GraphQL input field
	kind      string // link (xID, xIDs, addXIDs), unlink (removeXIDs) or clear (clearX)
	list      bool   // the field takes a list of ids
}

func (f edgeInput) String() string { return fmt.Sprintf("%s%s.%s", f.op, f.src, f.field) }

// edgeInputs walks every Create/Update input of the schema and returns each field that
// touches an edge, matched to its ent edge. An ID field no edge explains is an error: a new
// edge cannot escape the test.
func edgeInputs(t *testing.T) []edgeInput {
	var out []edgeInput
	for _, typ := range nodeTypes() {
		for _, op := range []string{"create", "update"} {
			f := crudField(op, typ)
			if f == nil {
				continue
			}
			in := gqlSchema().Types[f.Arguments.ForName("input").Type.Name()]
			for _, fd := range in.Fields {
				ei, ok := matchEdge(typ, op, fd)
				if ok {
					out = append(out, ei)
				} else if fd.Type.Name() == "ID" {
					t.Errorf("%s%s: input field %s takes ids but matches no edge of %s", op, typ, fd.Name, typ)
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// matchEdge finds the edge of typ an input field sets, following entgql's names: xID and
// clearX for unique edges; xIDs, addXIDs, removeXIDs and clearXs for the others.
func matchEdge(typ, op string, fd *ast.FieldDefinition) (edgeInput, bool) {
	lf := strings.ToLower(fd.Name)
	for name, e := range ent.Edges[typ] {
		le := strings.ToLower(e.Field)
		mk := func(kind string) (edgeInput, bool) {
			return edgeInput{src: typ, edge: name, info: e, op: op, field: fd.Name, kind: kind, list: fd.Type.Elem != nil}, true
		}
		if op == "update" && lf == "clear"+le && fd.Type.Name() == "Boolean" {
			return mk("clear")
		}
		if e.Unique {
			if lf == le+"id" {
				return mk("link")
			}
			continue
		}
		for _, one := range []string{le, strings.TrimSuffix(le, "s"), strings.TrimSuffix(le, "es")} {
			switch lf {
			case one + "ids", "add" + one + "ids":
				return mk("link")
			case "remove" + one + "ids":
				return mk("unlink")
			}
		}
	}
	return edgeInput{}, false
}

// mayLink is what the rule says of v linking or unlinking a record of the edge's target type
// owned by o (authz.checkEdges): a reference needs read, anything else write.
func (v *viewer) mayLink(f edgeInput, o owner) bool {
	if v.reference(f) {
		return v.read(f.info.Target, o) == allowed
	}
	return v.write(f.info.Target, o, false) == allowed
}

// reference reports whether f's edge is, for v, a reference that needs only read access:
// the record's own foreign key into the catalog, a user, v's own tenant or node, a tenant
// named by a record v writes in full, or the networks a new VM or region service is created
// on (placement checks them, as a reference: a tenant attaches VMs to networks it reads).
func (v *viewer) reference(f edgeInput) bool {
	e := f.info
	if f.op == "create" && f.edge == "networks" && (f.src == "VirtualMachine" || f.src == "RegionService") {
		return true
	}
	return e.Unique && e.OwnFK && (slices.Contains(catalog, e.Target) || e.Target == "User" ||
		e.Target == "Tenant" && (v.platformMay(authz.ActWrite, f.src) || v.tenantRole != "" && policyModel[v.tenantRole].may(authz.ActWrite, f.src)) ||
		e.Target == "ComputeNode" && v.agentNode != 0 && policyModel[authz.RoleAgent].may(authz.ActWrite, f.src))
}

// TestEveryEdgeWriteChecksBothEnds is generated from the schema: for every input field that
// adds, removes or clears an edge, every viewer that may change the record but not the record
// at the other end is refused with FORBIDDEN and nothing changes; and a viewer that may change
// both is not refused by authorization (so the test cannot pass by refusing everything).
func TestEveryEdgeWriteChecksBothEnds(t *testing.T) {
	w := newWorld(t)
	fields := edgeInputs(t)
	if len(fields) < 100 {
		t.Fatalf("found %d edge input fields; the walk of the schema is broken", len(fields))
	}
	candidates := []string{"maintainer-own", "tenant-member", "tenant-admin", "agent-own-node", "operator", "viewer"}
	var refused, accepted, positives int
	byRole := map[string]int{}
	for _, f := range fields {
		t.Run(f.String(), func(t *testing.T) {
			src, tgt := entities[f.src], entities[f.info.Target]
			if src.make == nil || tgt.make == nil || (f.op == "create" && src.create == nil) {
				t.Fatalf("no fixture for %s or %s: add it to entities", f.src, f.info.Target)
			}
			positive := false
			for _, name := range append(candidates, "admin") {
				v := w.viewer(name)
				if name == "admin" && positive {
					break
				}
				c := newEdgeCase(t, w, f)
				if c == nil {
					return
				}
				if !v.mayChange(f, c.srcOwner, c.create) {
					continue
				}
				if v.mayLink(f, c.tgtOwner) {
					// Pointing a unique edge elsewhere unlinks its current target too, which
					// only the admin may be sure to change here.
					if positive || (name != "admin" && !v.reference(f) && c.replaces()) {
						continue
					}
					positive = true
					positives++
					if c.run(t, v, true) {
						accepted++
					}
					continue
				}
				c.run(t, v, false)
				refused++
				byRole[name]++
			}
		})
	}
	t.Logf("%d edge input fields: %d refusals checked (%v), %d positive cases, %d of them accepted outright",
		len(fields), refused, byRole, positives, accepted)
	if accepted == 0 || refused == 0 {
		t.Errorf("%d refusals and %d acceptances: the test exercises nothing", refused, accepted)
	}
}

// mayChange is what the rule says of v making the mutation of f on the record, apart from the
// edge.
func (v *viewer) mayChange(f edgeInput, o owner, create bool) bool {
	if v.anonymous || (create && v.write(f.src, o, true) != allowed) {
		return false
	}
	return create || v.write(f.src, o, false) == allowed
}

// edgeCase is one record, one target and the mutation of one edge input between them.
type edgeCase struct {
	w                  *world
	f                  edgeInput
	src, tgt           int // src is 0 for a create
	srcOwner, tgtOwner owner
	create             bool
	input              map[string]any
}

// newEdgeCase makes a fresh source (or create input) and target for f, linking them first
// (as the admin) when f unlinks or clears. It returns nil when that link cannot exist from
// this side (see the CONFLICT case below); any other failure to set it up fails the test.
func newEdgeCase(t *testing.T, w *world, f edgeInput) *edgeCase {
	t.Helper()
	c := &edgeCase{w: w, f: f, create: f.op == "create"}
	c.tgt, c.tgtOwner = entities[f.info.Target].make(w)
	if c.create {
		c.input, c.srcOwner = entities[f.src].create(w)
	} else {
		c.src, c.srcOwner = entities[f.src].make(w)
		c.input = map[string]any{}
	}
	if f.kind == "link" {
		c.input[f.field] = c.ids()
		return c
	}
	link := linkField(f)
	if link == "" {
		t.Fatalf("%s: no input field links %s, so the unlink cannot be set up", f, f.edge)
	}
	r := w.do(t, w.viewer("admin"), c.mutation(), map[string]any{"id": gid(c.src), "input": map[string]any{link: c.idsFor(link)}})
	if len(r.Errors) > 0 || !c.linked() {
		// ent never moves a child whose row holds the edge (one-to-many, or one-to-one stored
		// on the target) from one parent to another: the add is refused as CONFLICT, and every
		// fixture of these targets already has a parent (a node its host, cluster and zone, a
		// VM its cluster, a link its ports), so such an unlink cannot be set up from this side.
		// That is the only setup failure allowed; anything else fails.
		if !onlyCode(r, "CONFLICT") || f.info.OwnFK {
			t.Fatalf("%s: the admin cannot link %s %d to %s %d first: %s", f, f.src, c.src, f.info.Target, c.tgt, r.ErrorsString())
		}
		t.Logf("%s: not walked: %s %d already has a parent of type %s, which ent does not move", f, f.info.Target, c.tgt, f.src)
		return nil
	}
	if f.kind == "clear" {
		c.input[f.field] = true
	} else {
		c.input[f.field] = c.ids()
	}
	return c
}

// linkField is the update input field that links the edge f unlinks or clears.
func linkField(f edgeInput) string {
	in := gqlSchema().Types["Update"+f.src+"Input"]
	for _, fd := range in.Fields {
		if ei, ok := matchEdge(f.src, "update", fd); ok && ei.edge == f.edge && ei.kind == "link" {
			return fd.Name
		}
	}
	return ""
}

func (c *edgeCase) ids() any { return c.idsFor(c.f.field) }

func (c *edgeCase) idsFor(field string) any {
	if strings.HasSuffix(field, "IDs") {
		return []string{gid(c.tgt)}
	}
	return gid(c.tgt)
}

func (c *edgeCase) mutation() string {
	if c.create {
		return fmt.Sprintf(`mutation($input: Create%sInput!) { create%s(input: $input) { id } }`, c.f.src, c.f.src)
	}
	return fmt.Sprintf(`mutation($id: ID!, $input: Update%sInput!) { update%s(id: $id, input: $input) { id } }`, c.f.src, c.f.src)
}

// linked reports whether the source holds the target through the edge, read as the system.
func (c *edgeCase) linked() bool {
	n, err := c.w.c.CountWhere(c.w.ctx, c.f.src, []int{c.src}, entql.HasEdgeWith(c.f.edge, entql.FieldEQ("id", c.tgt)))
	if err != nil {
		c.w.tb.Fatalf("count %s %d: %v", c.f.src, c.src, err)
	}
	return n == 1
}

// replaces reports whether the mutation points a unique edge that needs write access (not a
// reference) away from the record it leads to today.
func (c *edgeCase) replaces() bool {
	if c.create || !c.f.info.Unique || c.f.kind != "link" {
		return false
	}
	n, err := c.w.c.CountWhere(c.w.ctx, c.f.src, []int{c.src}, entql.HasEdge(c.f.edge))
	if err != nil {
		c.w.tb.Fatalf("count %s %d: %v", c.f.src, c.src, err)
	}
	return n > 0
}

// count is the number of records of the source type, read as the system.
func (c *edgeCase) count() int {
	n, err := c.w.c.CountWhere(c.w.ctx, c.f.src, nil, nil)
	if err != nil {
		c.w.tb.Fatalf("count %s: %v", c.f.src, err)
	}
	return n
}

// run makes the mutation as v: refused with FORBIDDEN and nothing changed when !want; not
// refused by authorization when want. It reports whether the mutation succeeded.
func (c *edgeCase) run(t *testing.T, v *viewer, want bool) bool {
	t.Helper()
	before := 0
	if c.create {
		before = c.count()
	}
	vars := map[string]any{"input": c.input}
	if !c.create {
		vars["id"] = gid(c.src)
	}
	r := c.w.do(t, v, c.mutation(), vars)
	what := fmt.Sprintf("%s as %s (%s %d → %s %d owned %+v)", c.f, v.name, c.f.src, c.src, c.f.info.Target, c.tgt, c.tgtOwner)
	if !want {
		if !onlyCode(r, "FORBIDDEN") {
			t.Errorf("%s: want FORBIDDEN, got data %s errors %s", what, r.Data, r.ErrorsString())
		}
		switch {
		case c.create:
			if after := c.count(); after != before {
				t.Errorf("%s: %d %s records before, %d after", what, before, c.f.src, after)
			}
		case c.f.kind == "link" && c.linked():
			t.Errorf("%s: the link was made", what)
		case c.f.kind != "link" && !c.linked():
			t.Errorf("%s: the link was removed", what)
		}
		return false
	}
	for _, e := range r.Errors {
		if code := e.Code(); code == "FORBIDDEN" || code == "NOT_FOUND" || code == "UNAUTHENTICATED" || code == "INTERNAL" {
			t.Errorf("%s: want accepted by authorization, got %s", what, r.ErrorsString())
			return false
		}
	}
	return len(r.Errors) == 0
}

// TestWhereEdgesOnlySeeReadableRows: a where filter through an edge (hasXWith, hasX) looks
// only at rows the viewer may read, so it cannot tell a tenant admin which of its users also
// belong to another tenant, nor spell out another tenant's name.
func TestWhereEdgesOnlySeeReadableRows(t *testing.T) {
	w := newWorld(t)
	adminA := w.viewer("tenant-admin")
	both := w.newUser("both", w.tenantA, w.tenantB)
	nameB := w.c.Tenant.GetX(w.ctx, w.tenantB).Name
	count := func(t *testing.T, where string, vars map[string]any) float64 {
		t.Helper()
		vars["u"] = gid(both)
		decl := "$u: ID!"
		if _, ok := vars["t"]; ok {
			decl += ", $t: ID"
		}
		if _, ok := vars["p"]; ok {
			decl += ", $p: String"
		}
		var out struct{ Users struct{ TotalCount float64 } }
		mustData(t, w.do(t, adminA, `query(`+decl+`) { users(where: {id: $u, `+where+`}) { totalCount } }`, vars), &out)
		return out.Users.TotalCount
	}
	for _, tc := range []struct {
		name, where string
		vars        map[string]any
		want        float64
	}{
		{"hasTenantsWith id B", `hasTenantsWith: {id: $t}`, map[string]any{"t": gid(w.tenantB)}, 0},
		{"hasTenantsWith nameHasPrefix of B's name", `hasTenantsWith: {nameHasPrefix: $p}`, map[string]any{"p": nameB[:len(nameB)-1]}, 0},
		{"hasTenantsWith in an or", `or: [{hasTenantsWith: {id: $t}}, {idNEQ: $u}]`, map[string]any{"t": gid(w.tenantB)}, 0},
		{"not hasTenantsWith id B", `not: {hasTenantsWith: {id: $t}}`, map[string]any{"t": gid(w.tenantB)}, 1},
		{"control: hasTenantsWith id A", `hasTenantsWith: {id: $t}`, map[string]any{"t": gid(w.tenantA)}, 1},
		{"control: hasTenants", `hasTenants: true`, map[string]any{}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := count(t, tc.where, tc.vars); got != tc.want {
				t.Errorf("users(where: {id: <member of A and B>, %s}) totalCount = %v, want %v", tc.where, got, tc.want)
			}
		})
	}
	t.Run("B's name letter by letter", func(t *testing.T) {
		// The prefix oracle: a prefix of B's name counts only where it is one of A's too.
		nameA := w.c.Tenant.GetX(w.ctx, w.tenantA).Name
		for i := 1; i <= len(nameB); i++ {
			want := 0.0
			if strings.HasPrefix(nameA, nameB[:i]) {
				want = 1
			}
			if got := count(t, `hasTenantsWith: {nameHasPrefix: $p}`, map[string]any{"p": nameB[:i]}); got != want {
				t.Fatalf("hasTenantsWith: {nameHasPrefix: %q} counts %v, want %v (A is %q)", nameB[:i], got, want, nameA)
			}
		}
	})
	t.Run("hasTenants false over unreadable tenants", func(t *testing.T) {
		// A user of B only is not readable at all; one of A and B has a readable tenant.
		if got := count(t, `hasTenants: false`, map[string]any{}); got != 0 {
			t.Errorf("hasTenants: false counts %v, want 0", got)
		}
	})
}

// TestEdgeChecksCostConstantStatements: the edge checks are batched per target type, so a
// tenant member attaching 1,000 volumes to a VM sends as many SQL statements as attaching 10.
func TestEdgeChecksCostConstantStatements(t *testing.T) {
	w := newWorld(t)
	var n atomic.Int64
	drv := dialect.DebugWithContext(entsql.OpenDB(dialect.Postgres, w.env.DB.DB), func(context.Context, ...any) { n.Add(1) })
	db := &infra.Database{Client: ent.NewClient(ent.Driver(drv)), DB: w.env.DB.DB, Dialect: dialect.Postgres}
	ids := &identity.Service{Client: db.Client, Redis: w.env.Identity.Redis, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	h := gqltest.NewHandler(db, ids, graph.DefaultOptions())
	member := w.viewer("tenant-member")
	// Attaching places the volumes on the VM's node: give it the disk for them.
	w.c.ComputeNode.UpdateOneID(w.node1).SetDiskCapacityGB(1 << 20).ExecX(w.ctx)

	attach := func(count int) int64 {
		vm := w.newVM(w.tenantA, w.node1)
		bulk := make([]*ent.VolumeCreate, count)
		for i := range bulk {
			bulk[i] = w.c.Volume.Create().SetName(uniq("vol")).SetSizeGB(1).SetTenantID(w.tenantA)
		}
		var vols []string
		for _, v := range w.c.Volume.CreateBulk(bulk...).SaveX(w.ctx) {
			vols = append(vols, gid(v.ID))
		}
		n.Store(0)
		r := send(t, h, call{token: member.token, query: `mutation($id: ID!, $v: [ID!]) { updateVirtualMachine(id: $id, input: {addVolumeIDs: $v}) { id } }`,
			vars: map[string]any{"id": gid(vm), "v": vols}})
		mustData(t, r, nil)
		if got := w.c.VirtualMachine.GetX(w.ctx, vm).QueryVolumes().CountX(w.ctx); got != count {
			t.Fatalf("VM %d holds %d volumes, want %d", vm, got, count)
		}
		return n.Load()
	}
	attach(1) // the token's first use records it: one statement more, once
	few, many := attach(10), attach(1000)
	t.Logf("addVolumeIDs as a tenant member: %d SQL statements for 10 volumes, %d for 1,000", few, many)
	if many > few {
		t.Errorf("attaching 1,000 volumes sent %d SQL statements, 10 sent %d: the checks are not batched", many, few)
	}
}
