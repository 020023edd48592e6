package provider

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/virtflow/virtflow/clients/apiclient"
)

// declared is a resource for a type whose API is entgql's generated CRUD: createT(input),
// updateT(id, input) with clearF for optional fields and addXIDs/removeXIDs for many-edges,
// deleteT(id), and node(id) to read. Its attributes are declared (Terraform name, GraphQL
// field, kind), so a type an operator edits gets a resource with import by writing its field
// list. A type whose create or delete is not entgql's (grantRole, createAPIToken and its
// TokenPayload, revokeAPIToken) names its mutations in the optional fields below.
type declared struct {
	name string // after "virtflow_", e.g. "datacenter"
	typ  string // GraphQL type, e.g. "Datacenter"
	desc string
	// list is the type's list query (e.g. "powerZones") and key its unique name field
	// ("name" when empty): an import id that is not a number is looked up there by name.
	// An empty list imports by id only.
	list, key string
	fields    []declField

	// createOp is the create mutation ("create"+typ when empty), inputType its input type,
	// payload the field of its answer holding the object when the answer wraps it (a
	// TokenPayload's apiToken), and secret an answer field kept in the sensitive attribute
	// of the same name (the token shown once).
	createOp, inputType, payload, secret string
	// deleteOp is the delete mutation ("delete"+typ when empty); deleteSel its selection when
	// it answers an object (revokeAPIToken).
	deleteOp, deleteSel string
	// goneIf is a field that, when set, means the object is gone (a token's revokedAt).
	goneIf string

	client *apiclient.Client
	// updatable is the set of the update input's fields, read once by introspection, so that
	// clearX is only sent where the API has it.
	once      sync.Once
	updatable map[string]bool
	updErr    error
}

// fieldKind is the Terraform type of a declared attribute.
type fieldKind int

const (
	kString fieldKind = iota // also enums
	kInt
	kBool
	kTime    // an RFC 3339 time; an answer equal as an instant keeps the configured spelling
	kLabels  // the Labels scalar, a map of strings
	kStrings // a list of strings
	kIDs     // the ids of a many-edge (a connection)
)

// declField is one attribute. An edge field (edge true) is the id of a unique edge: the input
// field gql+"ID" (in+"ID" when in is set), read as gql { id }. Another field's input is in
// when set (the type's allowedCidrs is the input's allowedCIDRs). A kIDs field reads the connection gql and writes
// in+"IDs" (create) or add/remove+In+"IDs" (update).
type declField struct {
	attr, gql, desc string
	kind            fieldKind
	edge            bool
	in              string
	required        bool
	// computed: the server fills it when left out (a default); ints, bools and id sets are
	// always computed unless required.
	computed bool
	// replaceOnChange: the update input has no such field (or changing it means a new object).
	replaceOnChange bool
	// writeOnly: sensitive and never answered (a webhook secret); the state keeps what was
	// configured.
	writeOnly bool
	// readOnly: answered by the API, never sent (a token's prefix).
	readOnly bool
	// detach (kIDs): destroy first removes the ids in the state, for an API that refuses
	// to delete an object still holding members (a zone with racks).
	detach bool
}

var (
	_ resource.ResourceWithConfigure   = (*declared)(nil)
	_ resource.ResourceWithImportState = (*declared)(nil)
)

func (r *declared) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + r.name
}

func (r *declared) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := map[string]schema.Attribute{"id": idAttribute()}
	for _, f := range r.fields {
		attrs[f.attr] = f.schema()
	}
	if r.secret != "" {
		attrs[r.secret] = schema.StringAttribute{Computed: true, Sensitive: true,
			Description:   "The secret, answered once at create (null after an import: the API never shows it again).",
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}}
	}
	resp.Schema = schema.Schema{Description: r.desc, Attributes: attrs}
}

// schema is the attribute of f.
func (f declField) schema() schema.Attribute {
	if f.readOnly {
		return schema.StringAttribute{Computed: true, Description: f.desc,
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}}
	}
	fl := []flag{optional}
	if f.required {
		fl = []flag{required}
	}
	if f.replaceOnChange {
		fl = append(fl, replace)
	}
	defaulted := !f.required && (f.computed || f.kind == kInt || f.kind == kBool || f.kind == kIDs)
	if defaulted {
		fl = append(fl, computed)
	}
	if f.writeOnly {
		fl = append(fl, sensitive)
	}
	switch f.kind {
	case kInt:
		return intAttr(f.desc, fl...)
	case kBool:
		return boolAttr(f.desc, fl...)
	case kIDs:
		return idSetAttr(f.desc, fl...)
	case kLabels:
		a := schema.MapAttribute{ElementType: types.StringType, Optional: true, Description: f.desc}
		if f.replaceOnChange {
			a.PlanModifiers = []planmodifier.Map{mapplanmodifier.RequiresReplace()}
		}
		return a
	case kStrings:
		a := schema.ListAttribute{ElementType: types.StringType, Optional: true, Description: f.desc}
		if f.replaceOnChange {
			a.PlanModifiers = []planmodifier.List{listplanmodifier.RequiresReplace()}
		}
		return a
	}
	return stringAttr(f.desc, fl...)
}

func (r *declared) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	if c, ok := req.ProviderData.(*apiclient.Client); ok {
		r.client = c
	}
}

// getter is a plan or a state.
type getter interface {
	GetAttribute(ctx context.Context, p path.Path, target any) diag.Diagnostics
}

// key is f's input field.
func (f declField) key() string {
	if f.edge && f.in != "" {
		return f.in + "ID"
	}
	if f.edge {
		return f.gql + "ID"
	}
	if f.kind == kIDs {
		return f.in + "IDs"
	}
	if f.in != "" {
		return f.in
	}
	return f.gql
}

// clearKey is the update input's field that clears f (clearX for a field x or an edge x).
func (f declField) clearKey() string { return "clear" + upperFirst(f.gql) }

// input is the create input from the plan, or the update input (state is then the prior
// state): optional fields left out are cleared, id sets are changed by what was added and
// removed.
func (r *declared) input(ctx context.Context, plan getter, state getter) (map[string]any, error) {
	update := state != nil
	in := map[string]any{}
	canClear := func(f declField) bool { return update && !f.required && r.updatable[f.clearKey()] }
	for _, f := range r.fields {
		if f.readOnly || (update && f.replaceOnChange) {
			continue
		}
		key := f.key()
		get := func(target any) error {
			if d := plan.GetAttribute(ctx, path.Root(f.attr), target); d.HasError() {
				return fmt.Errorf("%s: %v", f.attr, d)
			}
			return nil
		}
		switch f.kind {
		case kInt:
			var v types.Int64
			if err := get(&v); err != nil {
				return nil, err
			}
			if !v.IsNull() && !v.IsUnknown() {
				in[key] = v.ValueInt64()
			} else if canClear(f) {
				in[f.clearKey()] = true
			}
		case kBool:
			var v types.Bool
			if err := get(&v); err != nil {
				return nil, err
			}
			if !v.IsNull() && !v.IsUnknown() {
				in[key] = v.ValueBool()
			}
		case kLabels:
			var v types.Map
			if err := get(&v); err != nil {
				return nil, err
			}
			if m := stringMap(ctx, v); m != nil {
				in[key] = *m
			} else if canClear(f) {
				in[f.clearKey()] = true
			}
		case kStrings:
			var v types.List
			if err := get(&v); err != nil {
				return nil, err
			}
			if l := stringList(ctx, v); l != nil {
				in[key] = l
			} else if canClear(f) {
				in[f.clearKey()] = true
			}
		case kIDs:
			var v types.Set
			if err := get(&v); err != nil {
				return nil, err
			}
			if v.IsNull() || v.IsUnknown() {
				continue // not managed: whatever the API has stays
			}
			want := stringSet(ctx, v)
			if want == nil {
				want = []string{}
			}
			if !update {
				in[key] = want
				continue
			}
			var sv types.Set
			if d := state.GetAttribute(ctx, path.Root(f.attr), &sv); d.HasError() {
				return nil, fmt.Errorf("%s: %v", f.attr, d)
			}
			add, remove := diffSets(want, stringSet(ctx, sv))
			if len(add) > 0 {
				in["add"+upperFirst(key)] = add
			}
			if len(remove) > 0 {
				in["remove"+upperFirst(key)] = remove
			}
		default:
			var v types.String
			if err := get(&v); err != nil {
				return nil, err
			}
			if !v.IsNull() && !v.IsUnknown() {
				in[key] = v.ValueString()
			} else if canClear(f) {
				in[f.clearKey()] = true
			}
		}
	}
	return in, nil
}

// diffSets is what want has that have lacks, and the reverse.
func diffSets(want, have []string) (add, remove []string) {
	w, h := map[string]bool{}, map[string]bool{}
	for _, s := range want {
		w[s] = true
	}
	for _, s := range have {
		h[s] = true
		if !w[s] {
			remove = append(remove, s)
		}
	}
	for _, s := range want {
		if !h[s] {
			add = append(add, s)
		}
	}
	return add, remove
}

func upperFirst(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// selection is what the resource reads of its object.
func (r *declared) selection() string {
	sel := []string{"id"}
	for _, f := range r.fields {
		switch {
		case f.writeOnly:
		case f.edge:
			sel = append(sel, f.gql+" { id }")
		case f.kind == kIDs:
			sel = append(sel, f.gql+"(first: 1000) { edges { node { id } } }")
		default:
			sel = append(sel, f.gql)
		}
	}
	if r.goneIf != "" {
		sel = append(sel, r.goneIf)
	}
	return strings.Join(sel, " ")
}

// setState writes an API answer into the state; prior (the plan, or the state read) gives
// write-only attributes and the configured spelling of times.
func (r *declared) setState(ctx context.Context, st *tfsdk.State, obj map[string]any, prior getter) error {
	vals := map[string]attr.Value{"id": scalarString(obj["id"])}
	for _, f := range r.fields {
		v := obj[f.gql]
		switch {
		case f.writeOnly:
			var p types.String
			if prior != nil {
				prior.GetAttribute(ctx, path.Root(f.attr), &p)
			}
			if p.IsUnknown() {
				p = types.StringNull()
			}
			vals[f.attr] = p
		case f.kind == kInt:
			if n, ok := v.(float64); ok {
				vals[f.attr] = types.Int64Value(int64(n))
			} else {
				vals[f.attr] = types.Int64Null()
			}
		case f.kind == kBool:
			if b, ok := v.(bool); ok {
				vals[f.attr] = types.BoolValue(b)
			} else {
				vals[f.attr] = types.BoolNull()
			}
		case f.kind == kLabels:
			m := map[string]string{}
			if o, ok := v.(map[string]any); ok {
				for k, x := range o {
					m[k] = fmt.Sprint(x)
				}
			}
			vals[f.attr] = mapv(&m)
		case f.kind == kStrings:
			var l []string
			if a, ok := v.([]any); ok {
				for _, x := range a {
					l = append(l, fmt.Sprint(x))
				}
			}
			vals[f.attr] = stringsList(l)
		case f.kind == kIDs:
			ids := []string{}
			if conn, ok := v.(map[string]any); ok {
				edges, _ := conn["edges"].([]any)
				for _, e := range edges {
					if n, ok := e.(map[string]any)["node"].(map[string]any); ok {
						ids = append(ids, scalarString(n).ValueString())
					}
				}
			}
			sort.Strings(ids)
			vals[f.attr] = stringsSet(ids)
		default:
			s := scalarString(v)
			if !s.IsNull() && s.ValueString() == "" {
				s = types.StringNull()
			}
			if f.kind == kTime && !s.IsNull() && prior != nil {
				var p types.String
				prior.GetAttribute(ctx, path.Root(f.attr), &p)
				if sameInstant(p, s) {
					s = p
				}
			}
			vals[f.attr] = s
		}
	}
	for k, v := range vals {
		if d := st.SetAttribute(ctx, path.Root(k), v); d.HasError() {
			return fmt.Errorf("%s: %v", k, d)
		}
	}
	return nil
}

// sameInstant reports whether two RFC 3339 strings name the same time.
func sameInstant(a, b types.String) bool {
	if a.IsNull() || a.IsUnknown() || b.IsNull() {
		return false
	}
	ta, err1 := time.Parse(time.RFC3339Nano, a.ValueString())
	tb, err2 := time.Parse(time.RFC3339Nano, b.ValueString())
	return err1 == nil && err2 == nil && ta.Equal(tb)
}

func (r *declared) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	in, err := r.input(ctx, req.Plan, nil)
	if err != nil {
		resp.Diagnostics.AddError("Cannot create virtflow_"+r.name, err.Error())
		return
	}
	op, inType := r.createOp, r.inputType
	if op == "" {
		op, inType = "create"+r.typ, "Create"+r.typ+"Input"
	}
	sel := r.selection()
	if r.payload != "" {
		sel = fmt.Sprintf("%s { %s }", r.payload, sel)
		if r.secret != "" {
			sel += " " + r.secret
		}
	}
	q := fmt.Sprintf("mutation($in: %s!) { o: %s(input: $in) { %s } }", inType, op, sel)
	var out struct{ O map[string]any }
	if err := r.client.Do(ctx, q, map[string]any{"in": in}, &out); err != nil {
		addAPIError(&resp.Diagnostics, "Cannot create virtflow_"+r.name, err, r.attrNames())
		return
	}
	obj := out.O
	if r.payload != "" {
		obj, _ = out.O[r.payload].(map[string]any)
		if r.secret != "" {
			resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(r.secret), scalarString(out.O[r.secret]))...)
		}
	}
	if err := r.setState(ctx, &resp.State, obj, req.Plan); err != nil {
		resp.Diagnostics.AddError("Cannot create virtflow_"+r.name, err.Error())
	}
}

func (r *declared) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var id types.String
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("id"), &id)...)
	if resp.Diagnostics.HasError() {
		return
	}
	q := fmt.Sprintf("query($id: ID!) { node(id: $id) { __typename ... on %s { %s } } }", r.typ, r.selection())
	var out struct{ Node map[string]any }
	if err := r.client.Do(ctx, q, map[string]any{"id": id.ValueString()}, &out); err != nil {
		if apiclient.IsNotFound(err) {
			resp.State.RemoveResource(ctx)
			return
		}
		addAPIError(&resp.Diagnostics, "Cannot read virtflow_"+r.name+" "+id.ValueString(), err, r.attrNames())
		return
	}
	if out.Node == nil || (r.goneIf != "" && out.Node[r.goneIf] != nil) {
		resp.State.RemoveResource(ctx)
		return
	}
	if out.Node["__typename"] != r.typ {
		resp.Diagnostics.AddError("Cannot read virtflow_"+r.name, fmt.Sprintf("%s is a %v, not a %s", id.ValueString(), out.Node["__typename"], r.typ))
		return
	}
	if err := r.setState(ctx, &resp.State, out.Node, req.State); err != nil {
		resp.Diagnostics.AddError("Cannot read virtflow_"+r.name, err.Error())
	}
}

// loadUpdatable reads the update input's field names once.
func (r *declared) loadUpdatable(ctx context.Context) error {
	r.once.Do(func() {
		var out struct {
			Type *struct{ InputFields []struct{ Name string } }
		}
		r.updErr = r.client.Do(ctx, `query($n: String!) { type: __type(name: $n) { inputFields { name } } }`, map[string]any{"n": "Update" + r.typ + "Input"}, &out)
		r.updatable = map[string]bool{}
		if r.updErr == nil && out.Type != nil {
			for _, f := range out.Type.InputFields {
				r.updatable[f.Name] = true
			}
		}
	})
	return r.updErr
}

func (r *declared) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var id types.String
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("id"), &id)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := r.loadUpdatable(ctx); err != nil {
		addAPIError(&resp.Diagnostics, "Cannot update virtflow_"+r.name+" "+id.ValueString(), err, nil)
		return
	}
	in, err := r.input(ctx, req.Plan, req.State)
	if err != nil {
		resp.Diagnostics.AddError("Cannot update virtflow_"+r.name, err.Error())
		return
	}
	q := fmt.Sprintf("mutation($id: ID!, $in: Update%sInput!) { o: update%s(id: $id, input: $in) { %s } }", r.typ, r.typ, r.selection())
	var out struct{ O map[string]any }
	if err := r.client.Do(ctx, q, map[string]any{"id": id.ValueString(), "in": in}, &out); err != nil {
		addAPIError(&resp.Diagnostics, "Cannot update virtflow_"+r.name+" "+id.ValueString(), err, r.attrNames())
		return
	}
	if r.secret != "" {
		var s types.String
		resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root(r.secret), &s)...)
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(r.secret), s)...)
	}
	if err := r.setState(ctx, &resp.State, out.O, req.Plan); err != nil {
		resp.Diagnostics.AddError("Cannot update virtflow_"+r.name, err.Error())
	}
}

func (r *declared) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var id types.String
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("id"), &id)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := r.detachMembers(ctx, req.State, id.ValueString()); err != nil {
		addAPIError(&resp.Diagnostics, "Cannot delete virtflow_"+r.name+" "+id.ValueString(), err, r.attrNames())
		return
	}
	op := r.deleteOp
	if op == "" {
		op = "delete" + r.typ
	}
	q := fmt.Sprintf("mutation($id: ID!) { %s(id: $id) %s }", op, r.deleteSel)
	if err := r.client.Do(ctx, q, map[string]any{"id": id.ValueString()}, nil); err != nil && !apiclient.IsNotFound(err) {
		addAPIError(&resp.Diagnostics, "Cannot delete virtflow_"+r.name+" "+id.ValueString(), err, r.attrNames())
	}
}

// detachMembers removes the members of detach fields the state holds, in one update.
func (r *declared) detachMembers(ctx context.Context, st tfsdk.State, id string) error {
	in := map[string]any{}
	for _, f := range r.fields {
		if !f.detach {
			continue
		}
		var v types.Set
		if d := st.GetAttribute(ctx, path.Root(f.attr), &v); d.HasError() {
			return fmt.Errorf("%s: %v", f.attr, d)
		}
		if ids := stringSet(ctx, v); len(ids) > 0 {
			in["remove"+upperFirst(f.key())] = ids
		}
	}
	if len(in) == 0 {
		return nil
	}
	q := fmt.Sprintf("mutation($id: ID!, $in: Update%sInput!) { update%s(id: $id, input: $in) { id } }", r.typ, r.typ)
	err := r.client.Do(ctx, q, map[string]any{"id": id, "in": in}, nil)
	if apiclient.IsNotFound(err) {
		return nil
	}
	return err
}

// ImportState implements resource.ResourceWithImportState: the import id is the GraphQL id,
// or, for a type with a unique name, the name.
func (r *declared) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id := req.ID
	if !isID(id) && r.list != "" {
		key := r.key
		if key == "" {
			key = "name"
		}
		var err error
		if id, err = lookupID(ctx, r.client, r.list, key, req.ID); err != nil {
			resp.Diagnostics.AddError("Cannot import virtflow_"+r.name+" "+req.ID, err.Error())
			return
		}
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), id)...)
}

// attrNames maps input field names to attribute names, for errors naming a field.
func (r *declared) attrNames() map[string]string {
	m := map[string]string{}
	for _, f := range r.fields {
		m[f.key()] = f.attr
		if f.kind == kIDs {
			m["add"+upperFirst(f.key())] = f.attr
			m["remove"+upperFirst(f.key())] = f.attr
		}
	}
	return m
}

// Shorthands for declared fields.
func sf(attr, gql, desc string) declField { return declField{attr: attr, gql: gql, desc: desc} }
func req(f declField) declField           { f.required = true; return f }
func comp(f declField) declField          { f.computed = true; return f }
func repl(f declField) declField          { f.replaceOnChange = true; return f }
func detachF(f declField) declField       { f.detach = true; return f }
func of(k fieldKind, f declField) declField {
	f.kind = k
	return f
}
func edgeF(attr, gql, desc string) declField {
	return declField{attr: attr, gql: gql, desc: desc, edge: true}
}
func idsF(attr, gql, in, desc string) declField {
	return declField{attr: attr, gql: gql, in: in, desc: desc, kind: kIDs}
}

var (
	nameF = req(sf("name", "name", "Name."))
	descF = sf("description", "description", "Free text.")
)

// declaredResources are the resources an operator edits whose API is entgql's CRUD: the DCIM
// hierarchy above racks and its zones, compute clusters and nodes, IP ranges, people
// (users, maintainers, maintainer groups, role bindings, API tokens), monitoring (checks,
// event rules, silences), maintenances, notices, images, hypervisor providers and service
// meshes.
func declaredResources() []func() resource.Resource {
	zone := func(name, typ, what string, extra ...declField) declared {
		fs := []declField{req(sf("name", "name", "Name, unique in its datacenter.")), descF,
			req(edgeF("datacenter_id", "datacenter", "The datacenter.")),
			detachF(idsF("rack_ids", "racks", "rack", "The racks in the zone (left out: not managed here; destroy takes them out of the zone).")),
			detachF(idsF("host_ids", "hosts", "host", "The hosts in the zone (left out: not managed here; destroy takes them out of the zone).")),
		}
		return declared{name: name, typ: typ, list: lowerFirst(typ) + "s", desc: what, fields: append(fs, extra...)}
	}
	defs := []declared{
		{name: "region", typ: "Region", list: "regions", desc: "A region: a set of datacenters VMs are placed in.", fields: []declField{
			req(sf("name", "name", "Unique name.")), descF,
		}},
		{name: "datacenter", typ: "Datacenter", list: "datacenters", desc: "A datacenter of a region.", fields: []declField{
			req(sf("name", "name", "Unique name.")), descF,
			sf("building", "building", "Building."),
			sf("address", "address", "Street address."),
			sf("postcode", "postcode", "Postcode."),
			sf("phone", "phone", "Phone number."),
			sf("mail", "mail", "Operations mail address."),
			req(edgeF("region_id", "region", "The region.")),
		}},
		{name: "floor", typ: "Floor", list: "floors", desc: "A floor of a datacenter (racks stand on floors).", fields: []declField{
			nameF, descF,
			of(kInt, sf("building", "building", "Building number.")),
			of(kInt, sf("level", "level", "Level.")),
			of(kInt, sf("number", "number", "Number.")),
			req(edgeF("datacenter_id", "datacenter", "The datacenter.")),
		}},
		zone("power_zone", "PowerZone", "A power zone of a datacenter: racks and hosts fed by one power source (a failure domain placement spreads over)."),
		zone("rack_zone", "RackZone", "A rack zone of a datacenter: racks and hosts placement treats as one failure domain."),
		zone("network_zone", "NetworkZone", "A network zone of a datacenter: racks, hosts and networks behind one network failure domain.",
			detachF(idsF("network_ids", "networks", "network", "The networks in the zone (left out: not managed here; destroy takes them out of the zone)."))),
		{name: "availability_zone", typ: "AvailabilityZone", list: "availabilityZones", desc: "An availability zone of a region, a set of compute nodes.", fields: []declField{
			req(sf("name", "name", "Name, unique in its region.")), descF,
			req(edgeF("region_id", "region", "The region.")),
			idsF("node_ids", "nodes", "node", "The compute nodes in the zone (left out: not managed here)."),
		}},
		{name: "host_group", typ: "HostGroup", list: "hostGroups", desc: "A host group: hosts quotas are set on.", fields: []declField{
			req(sf("name", "name", "Unique name.")), descF,
			idsF("host_ids", "hosts", "host", "The hosts of the group (left out: not managed here)."),
		}},
		{name: "ip_range", typ: "IPRange", desc: "A range of addresses of a network (an IP prefix's reserved or DHCP span).", fields: []declField{
			req(sf("start_address", "startAddress", "First address of the range.")),
			req(sf("end_address", "endAddress", "Last address of the range, inclusive.")),
			descF,
			req(repl(edgeF("network_id", "network", "The network."))),
		}},
		{name: "cluster", typ: "Cluster", list: "clusters", desc: "A compute cluster: nodes of one datacenter scheduled together.", fields: []declField{
			req(sf("name", "name", "Unique name.")), descF,
			of(kLabels, sf("labels", "labels", "Key/value labels.")),
			of(kInt, sf("weight", "weight", "Placement weight, 0 to 10000 (default 100).")),
			req(edgeF("region_id", "region", "The region.")),
			req(edgeF("datacenter_id", "datacenter", "The datacenter.")),
		}},
		{name: "compute_node", typ: "ComputeNode", list: "computeNodes", desc: "A compute node (a host running the node agent). Nodes are usually registered by their agent and then imported here to manage labels, capacity and cordoning.", fields: []declField{
			req(sf("name", "name", "Unique name.")),
			of(kBool, sf("schedulable", "schedulable", "False while cordoned.")),
			of(kLabels, sf("labels", "labels", "Key/value labels placement matches on.")),
			of(kInt, sf("cpu_capacity", "cpuCapacity", "vCPUs offered to VMs.")),
			of(kInt, sf("memory_capacity_mb", "memoryCapacityMB", "Memory offered to VMs, in MB.")),
			of(kInt, sf("disk_capacity_gb", "diskCapacityGB", "Disk offered to VMs, in GB.")),
			sf("os_name", "osName", "Operating system, e.g. Ubuntu."),
			sf("os_version", "osVersion", "Operating system version."),
			of(kBool, sf("auto_cordon", "autoCordon", "Cordon the node on its own when checks fail.")),
			of(kBool, sf("auto_drain", "autoDrain", "Drain the node on its own when checks fail.")),
			of(kBool, sf("alerts_enabled", "alertsEnabled", "Raise alerts for the node.")),
			req(edgeF("host_id", "host", "The host it runs on.")),
			req(edgeF("cluster_id", "cluster", "The cluster.")),
			edgeF("availability_zone_id", "availabilityZone", "The availability zone."),
		}},
		{name: "provider", typ: "Provider", list: "providers", desc: "A provider: what a compute node runs workloads with (libvirt VMs, containers…).", fields: []declField{
			req(sf("name", "name", "Unique name.")), descF,
			req(sf("kind", "kind", "What it provides: VIRTUAL_MACHINE, POD, LOAD_BALANCER…")),
			req(sf("driver", "driver", "LIBVIRT, DOCKER, VPP, XDP or ETCD.")),
			of(kBool, sf("supports_live_migration", "supportsLiveMigration", "Whether its workloads migrate live.")),
			idsF("node_ids", "nodes", "node", "The compute nodes offering it (left out: not managed here)."),
		}},
		{name: "image", typ: "Image", list: "images", desc: "A VM image. The server fetches source (through the egress policy) or waits for an upload.", fields: []declField{
			req(sf("name", "name", "Unique name.")), descF,
			comp(sf("os_type", "osType", "LINUX or WINDOWS.")),
			sf("os_name", "osName", "Operating system, e.g. Ubuntu."),
			sf("os_version", "osVersion", "Operating system version."),
			of(kInt, sf("min_vcpus", "minVcpus", "Fewest vCPUs a VM from it needs.")),
			of(kInt, sf("min_memory_mb", "minMemoryMB", "Least memory a VM from it needs, in MB.")),
			req(repl(sf("source", "source", "http(s) URL the server fetches the bytes from, or \"upload\" for bytes sent to PUT /images/{id}/data."))),
			comp(repl(sf("format", "format", "QCOW2 or RAW."))),
			comp(repl(sf("checksum", "checksum", "sha256:<hex>; when given, the bytes must match it."))),
		}},
		{name: "user", typ: "User", list: "users", key: "username", desc: "A person's account (log in with a password or API tokens).", fields: []declField{
			req(sf("username", "username", "Unique login name.")),
			sf("display_name", "displayName", "Name shown to people."),
			sf("email", "email", "Mail address."),
			comp(sf("status", "status", "ACTIVE or DISABLED.")),
			idsF("tenant_ids", "tenants", "tenant", "Tenants the user is a member of (left out: not managed here)."),
		}},
		{name: "role_binding", typ: "RoleBinding", desc: "A role granted to a user on the platform, a tenant or a compute node (grantRole; revoked on destroy). Changing any attribute grants a new binding.",
			createOp: "grantRole", inputType: "GrantRoleInput", deleteOp: "revokeRole", fields: []declField{
				req(repl(edgeF("user_id", "user", "The user."))),
				req(repl(sf("role", "role", "ADMIN, OPERATOR, MAINTAINER, VIEWER (platform or node), TENANT_ADMIN or TENANT_MEMBER (with tenant_id)."))),
				repl(edgeF("tenant_id", "tenant", "The tenant, for a tenant role.")),
				repl(edgeF("node_id", "node", "The compute node, for a node role.")),
				{attr: "domain", gql: "domain", desc: "platform, tenant:<id> or node:<id>.", readOnly: true},
			}},
		{name: "api_token", typ: "APIToken", desc: "An API token. Its secret is answered once, at create, into the sensitive attribute token (kept in the state like every Terraform secret, null after an import: the server stores only its hash). Destroy revokes it. Changing any attribute makes a new token.",
			createOp: "createAPIToken", inputType: "CreateAPITokenInput", payload: "apiToken", secret: "token",
			deleteOp: "revokeAPIToken", deleteSel: "{ id }", goneIf: "revokedAt", fields: []declField{
				req(repl(sf("name", "name", "Name."))),
				comp(repl(sf("scope", "scope", "READ_ONLY (default) or READ_WRITE."))),
				repl(edgeF("tenant_id", "tenant", "The tenant it is limited to.")),
				repl(of(kTime, sf("expires_at", "expiresAt", "When it stops working (RFC 3339)."))),
				repl(declField{attr: "allowed_cidrs", gql: "allowedCidrs", in: "allowedCIDRs", kind: kStrings, desc: "Networks it may be used from."}),
				comp(repl(declField{attr: "user_id", gql: "owner", in: "user", edge: true, desc: "The user it acts as (default: the caller)."})),
				{attr: "prefix", gql: "prefix", desc: "First characters of the token, to recognise it.", readOnly: true},
			}},
		{name: "maintainer", typ: "Maintainer", list: "maintainers", desc: "A maintainer: a person responsible for hosts, racks, nodes, clusters, VMs (NetBox's contact).", fields: []declField{
			nameF,
			req(sf("account", "account", "Unique account name.")),
			sf("email", "email", "Mail address."),
			comp(sf("status", "status", "ACTIVE or INACTIVE.")),
			edgeF("user_id", "user", "The user account of the person."),
			idsF("host_ids", "hosts", "host", "Hosts they are responsible for (left out: not managed here)."),
			idsF("rack_ids", "racks", "rack", "Racks they are responsible for (left out: not managed here)."),
			idsF("node_ids", "nodes", "node", "Compute nodes they are responsible for (left out: not managed here)."),
			idsF("cluster_ids", "clusters", "cluster", "Clusters they are responsible for (left out: not managed here)."),
		}},
		{name: "maintainer_group", typ: "MaintainerGroup", list: "maintainerGroups", desc: "A group of maintainers (a team) and what it is responsible for; alerts on those are POSTed to its webhook.", fields: []declField{
			req(sf("name", "name", "Unique name.")), descF,
			comp(sf("status", "status", "ACTIVE or INACTIVE.")),
			sf("webhook_url", "webhookURL", "Alerts on the resources the group is responsible for are POSTed here."),
			{attr: "webhook_secret", gql: "webhookSecret", desc: "HMAC-SHA256 key of the hook bodies; write-only.", writeOnly: true},
			edgeF("admin_id", "admin", "The maintainer administering the group."),
			idsF("member_ids", "members", "member", "The maintainers in the group (left out: not managed here)."),
			idsF("host_ids", "hosts", "host", "Hosts the group is responsible for (left out: not managed here)."),
			idsF("rack_ids", "racks", "rack", "Racks the group is responsible for (left out: not managed here)."),
			idsF("node_ids", "nodes", "node", "Compute nodes the group is responsible for (left out: not managed here)."),
			idsF("cluster_ids", "clusters", "cluster", "Clusters the group is responsible for (left out: not managed here)."),
		}},
		{name: "check", typ: "Check", list: "checks", desc: "A health check the node agents run.", fields: []declField{
			req(sf("name", "name", "Unique name.")), descF,
			sf("builtin", "builtin", "A check built into the agent (LIBVIRTD_REACHABLE, STORAGE_POOL_FREE, DOMAIN_STATE_DRIFT, NIC_LINK); command is then ignored."),
			sf("command", "command", "Run by the agent without a shell, split on spaces."),
			of(kInt, sf("interval_seconds", "intervalSeconds", "Seconds between runs (default 60).")),
			of(kInt, sf("timeout_seconds", "timeoutSeconds", "Seconds a run may take (default 10).")),
			of(kInt, sf("occurrences", "occurrences", "Consecutive failures before a non-OK status (default 1).")),
			of(kInt, sf("reissue_duration_seconds", "reissueDurationSeconds", "Seconds before an unchanged status is reported again.")),
			of(kLabels, sf("label_selector", "labelSelector", "Also applies to every node carrying all these labels.")),
			of(kBool, sf("enabled", "enabled", "Whether agents run it (default true).")),
			idsF("node_ids", "nodes", "node", "Nodes it runs on (left out: not managed here)."),
			idsF("cluster_ids", "clusters", "cluster", "Clusters on whose nodes it runs (left out: not managed here)."),
		}},
		{name: "event_rule", typ: "EventRule", list: "eventRules", desc: "A rule the event pipeline applies to check results: filter, silence, aggregate or act (alert, hook).", fields: []declField{
			req(sf("name", "name", "Unique name.")), descF,
			req(sf("kind", "kind", "FILTER, SILENCE, AGGREGATE or ACTION.")),
			of(kInt, sf("priority", "priority", "Lower runs first (default 100).")),
			comp(sf("check_name_pattern", "checkNamePattern", "Glob on the event's check name (default *).")),
			sf("status_match", "statusMatch", "SUCCESS, WARNING or CRITICAL."),
			sf("action", "action", "CREATE_ALERT, RESOLVE_ALERT or CALL_HOOK."),
			sf("alert_severity", "alertSeverity", "FATAL, CRITICAL or WARNING."),
			sf("hook_url", "hookURL", "URL CALL_HOOK posts to (through the egress policy)."),
			{attr: "hook_secret", gql: "hookSecret", desc: "HMAC-SHA256 key of hook bodies; write-only.", writeOnly: true},
			of(kInt, sf("aggregate_window_seconds", "aggregateWindowSeconds", "Aggregate: how long the first event of a group waits for the others.")),
			of(kBool, sf("enabled", "enabled", "Whether the rule applies (default true).")),
			comp(sf("node_pattern", "nodePattern", "Glob on the event's node name (default *).")),
			comp(sf("host_pattern", "hostPattern", "Glob on the event's host name (default *).")),
			comp(sf("rack_pattern", "rackPattern", "Glob on the rack of the event's host (default *).")),
			comp(sf("cluster_pattern", "clusterPattern", "Glob on the cluster of the event's node (default *).")),
			of(kLabels, sf("label_matchers", "labelMatchers", "Every label must equal (value * matches any) the event's or its node's.")),
			of(kInt, sf("occurrences", "occurrences", "Consecutive events of one status before the rule acts.")),
			of(kInt, sf("reissue_seconds", "reissueSeconds", "Once acted for a fingerprint, repeats are ignored this long.")),
			of(kStrings, sf("group_by", "groupBy", "Aggregate: attributes that make a group (check, status, node, host, rack, cluster, label:<key>).")),
			of(kInt, sf("group_interval_seconds", "groupIntervalSeconds", "Aggregate: least time between two notifications of a group.")),
		}},
		{name: "silence", typ: "Silence", desc: "A silence: events matching it raise no alert until it ends.", fields: []declField{
			comp(sf("check_name_pattern", "checkNamePattern", "Glob on the check name (default *).")),
			comp(sf("node_pattern", "nodePattern", "Glob on the node name (default *).")),
			comp(sf("host_pattern", "hostPattern", "Glob on the host name (default *).")),
			of(kLabels, sf("label_matchers", "labelMatchers", "Labels the event must carry.")),
			comp(of(kTime, sf("starts_at", "startsAt", "Start (RFC 3339; default now)."))),
			req(of(kTime, sf("ends_at", "endsAt", "End (RFC 3339)."))),
			req(sf("comment", "comment", "Why.")),
		}},
		{name: "maintenance", typ: "Maintenance", desc: "A maintenance window on hosts and nodes.", fields: []declField{
			req(sf("title", "title", "Title.")), descF,
			comp(sf("status", "status", "PLANNED, IN_PROGRESS or CLOSED.")),
			req(of(kTime, sf("starts_at", "startsAt", "Start (RFC 3339)."))),
			of(kTime, sf("ends_at", "endsAt", "End (RFC 3339).")),
			edgeF("maintainer_id", "maintainer", "The maintainer in charge."),
			idsF("host_ids", "hosts", "host", "Hosts under maintenance (left out: not managed here)."),
			idsF("node_ids", "nodes", "node", "Compute nodes under maintenance (left out: not managed here)."),
		}},
		{name: "notice", typ: "Notice", desc: "A notice shown in the dashboard to everyone, one tenant or one user.", fields: []declField{
			req(sf("title", "title", "Title.")),
			sf("body", "body", "Text."),
			comp(sf("severity", "severity", "INFO, IMPORTANT or FAULT.")),
			comp(sf("audience", "audience", "ALL, TENANT or USER.")),
			comp(of(kTime, sf("published_at", "publishedAt", "When it shows (RFC 3339; default now)."))),
			of(kTime, sf("expires_at", "expiresAt", "When it stops showing (RFC 3339).")),
			edgeF("tenant_id", "tenant", "The tenant, for audience TENANT."),
			edgeF("user_id", "user", "The user, for audience USER."),
		}},
		{name: "service_mesh", typ: "ServiceMesh", list: "serviceMeshes", desc: "A service mesh spanning Kubernetes clusters.", fields: []declField{
			req(sf("name", "name", "Unique name.")), descF,
			comp(sf("type", "type", "ISTIO, LINKERD, CILIUM or OTHER.")),
			comp(sf("status", "status", "INITIALIZING, ACTIVE, DELETING or ERROR.")),
			idsF("kubernetes_cluster_ids", "kubernetesClusters", "kubernetesCluster", "The Kubernetes clusters in the mesh (left out: not managed here)."),
		}},
	}
	out := make([]func() resource.Resource, len(defs))
	for i := range defs {
		d := &defs[i]
		out[i] = func() resource.Resource {
			return &declared{name: d.name, typ: d.typ, desc: d.desc, list: d.list, key: d.key, fields: d.fields,
				createOp: d.createOp, inputType: d.inputType, payload: d.payload, secret: d.secret,
				deleteOp: d.deleteOp, deleteSel: d.deleteSel, goneIf: d.goneIf}
		}
	}
	return out
}

func lowerFirst(s string) string { return strings.ToLower(s[:1]) + s[1:] }
