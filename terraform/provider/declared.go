package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/virtflow/virtflow/apiclient"
)

// declared is a resource for a type whose API is entgql's generated CRUD: createT(input),
// updateT(id, input) with clearF for optional fields, deleteT(id), and node(id) to read. Its
// attributes are declared (Terraform name, GraphQL field, kind), so a type an operator
// edits gets a resource with import by writing its field list.
type declared struct {
	name   string // after "virtflow_", e.g. "datacenter"
	typ    string // GraphQL type, e.g. "Datacenter"
	desc   string
	fields []declField
	client *apiclient.Client
}

// declField is one attribute. An edge field (edge true) is the id of a unique edge: the input
// field gql+"ID", read as gql { id }.
type declField struct {
	attr, gql, desc string
	integer, edge   bool
	required        bool
	// replaceOnChange: the update input has no such field (or changing it means a new object).
	replaceOnChange bool
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
		fl := []flag{optional}
		if f.required {
			fl = []flag{required}
		}
		if f.replaceOnChange {
			fl = append(fl, replace)
		}
		if f.integer {
			// The API gives integers a default (0): computed, so a left-out one takes it.
			if !f.required {
				fl = append(fl, computed)
			}
			attrs[f.attr] = intAttr(f.desc, fl...)
		} else {
			attrs[f.attr] = stringAttr(f.desc, fl...)
		}
	}
	resp.Schema = schema.Schema{Description: r.desc, Attributes: attrs}
}

func (r *declared) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	if c, ok := req.ProviderData.(*apiclient.Client); ok {
		r.client = c
	}
}

// input is the create or update input from the plan; update clears optional fields left out.
func (r *declared) input(ctx context.Context, plan tfsdk.Plan, update bool) (map[string]any, error) {
	in := map[string]any{}
	for _, f := range r.fields {
		key := f.gql
		if f.edge {
			key += "ID"
		}
		if update && f.replaceOnChange {
			continue
		}
		if f.integer {
			var v types.Int64
			if d := plan.GetAttribute(ctx, path.Root(f.attr), &v); d.HasError() {
				return nil, fmt.Errorf("%s: %v", f.attr, d)
			}
			if !v.IsNull() && !v.IsUnknown() {
				in[key] = v.ValueInt64()
			} else if update && !f.required {
				in["clear"+upperFirst(key)] = true
			}
			continue
		}
		var v types.String
		if d := plan.GetAttribute(ctx, path.Root(f.attr), &v); d.HasError() {
			return nil, fmt.Errorf("%s: %v", f.attr, d)
		}
		if !v.IsNull() && !v.IsUnknown() {
			in[key] = v.ValueString()
		} else if update && !f.required && !f.edge {
			in["clear"+upperFirst(key)] = true
		}
	}
	return in, nil
}

func upperFirst(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// selection is what the resource reads of its object.
func (r *declared) selection() string {
	sel := []string{"id"}
	for _, f := range r.fields {
		if f.edge {
			sel = append(sel, f.gql+" { id }")
		} else {
			sel = append(sel, f.gql)
		}
	}
	return strings.Join(sel, " ")
}

// setState writes an API answer into the state.
func (r *declared) setState(ctx context.Context, st *tfsdk.State, obj map[string]any) error {
	vals := map[string]attr.Value{"id": scalarString(obj["id"])}
	for _, f := range r.fields {
		v := obj[f.gql]
		if f.integer {
			if n, ok := v.(float64); ok {
				vals[f.attr] = types.Int64Value(int64(n))
			} else {
				vals[f.attr] = types.Int64Null()
			}
			continue
		}
		s := scalarString(v)
		if !s.IsNull() && s.ValueString() == "" {
			s = types.StringNull()
		}
		vals[f.attr] = s
	}
	for k, v := range vals {
		if d := st.SetAttribute(ctx, path.Root(k), v); d.HasError() {
			return fmt.Errorf("%s: %v", k, d)
		}
	}
	return nil
}

func (r *declared) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	in, err := r.input(ctx, req.Plan, false)
	if err != nil {
		resp.Diagnostics.AddError("Cannot create virtflow_"+r.name, err.Error())
		return
	}
	q := fmt.Sprintf("mutation($in: Create%sInput!) { o: create%s(input: $in) { %s } }", r.typ, r.typ, r.selection())
	var out struct{ O map[string]any }
	if err := r.client.Do(ctx, q, map[string]any{"in": in}, &out); err != nil {
		addAPIError(&resp.Diagnostics, "Cannot create virtflow_"+r.name, err, r.attrNames())
		return
	}
	if err := r.setState(ctx, &resp.State, out.O); err != nil {
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
	if out.Node == nil {
		resp.State.RemoveResource(ctx)
		return
	}
	if out.Node["__typename"] != r.typ {
		resp.Diagnostics.AddError("Cannot read virtflow_"+r.name, fmt.Sprintf("%s is a %v, not a %s", id.ValueString(), out.Node["__typename"], r.typ))
		return
	}
	if err := r.setState(ctx, &resp.State, out.Node); err != nil {
		resp.Diagnostics.AddError("Cannot read virtflow_"+r.name, err.Error())
	}
}

func (r *declared) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var id types.String
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("id"), &id)...)
	in, err := r.input(ctx, req.Plan, true)
	if err != nil || resp.Diagnostics.HasError() {
		resp.Diagnostics.AddError("Cannot update virtflow_"+r.name, fmt.Sprint(err))
		return
	}
	q := fmt.Sprintf("mutation($id: ID!, $in: Update%sInput!) { o: update%s(id: $id, input: $in) { %s } }", r.typ, r.typ, r.selection())
	var out struct{ O map[string]any }
	if err := r.client.Do(ctx, q, map[string]any{"id": id.ValueString(), "in": in}, &out); err != nil {
		addAPIError(&resp.Diagnostics, "Cannot update virtflow_"+r.name+" "+id.ValueString(), err, r.attrNames())
		return
	}
	if err := r.setState(ctx, &resp.State, out.O); err != nil {
		resp.Diagnostics.AddError("Cannot update virtflow_"+r.name, err.Error())
	}
}

func (r *declared) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var id types.String
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("id"), &id)...)
	if resp.Diagnostics.HasError() {
		return
	}
	q := fmt.Sprintf("mutation($id: ID!) { delete%s(id: $id) }", r.typ)
	if err := r.client.Do(ctx, q, map[string]any{"id": id.ValueString()}, nil); err != nil && !apiclient.IsNotFound(err) {
		addAPIError(&resp.Diagnostics, "Cannot delete virtflow_"+r.name+" "+id.ValueString(), err, r.attrNames())
	}
}

// ImportState implements resource.ResourceWithImportState: the import id is the GraphQL id.
func (r *declared) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
}

// attrNames maps input field names to attribute names, for errors naming a field.
func (r *declared) attrNames() map[string]string {
	m := map[string]string{}
	for _, f := range r.fields {
		if f.edge {
			m[f.gql+"ID"] = f.attr
		} else {
			m[f.gql] = f.attr
		}
	}
	return m
}

// declaredResources are the resources of the DCIM hierarchy above racks: regions,
// datacenters, floors and power zones.
func declaredResources() []func() resource.Resource {
	defs := []declared{
		{name: "region", typ: "Region", desc: "A region: a set of datacenters VMs are placed in.", fields: []declField{
			{attr: "name", gql: "name", desc: "Unique name.", required: true},
			{attr: "description", gql: "description"},
		}},
		{name: "datacenter", typ: "Datacenter", desc: "A datacenter of a region.", fields: []declField{
			{attr: "name", gql: "name", desc: "Unique name.", required: true},
			{attr: "description", gql: "description"},
			{attr: "building", gql: "building", desc: "Building."},
			{attr: "address", gql: "address", desc: "Street address."},
			{attr: "postcode", gql: "postcode"},
			{attr: "phone", gql: "phone"},
			{attr: "mail", gql: "mail", desc: "Operations mail address."},
			{attr: "region_id", gql: "region", desc: "The region.", edge: true, required: true},
		}},
		{name: "floor", typ: "Floor", desc: "A floor of a datacenter (racks stand on floors).", fields: []declField{
			{attr: "name", gql: "name", desc: "Name.", required: true},
			{attr: "description", gql: "description"},
			{attr: "building", gql: "building", desc: "Building number.", integer: true},
			{attr: "level", gql: "level", desc: "Level.", integer: true},
			{attr: "number", gql: "number", desc: "Number.", integer: true},
			{attr: "datacenter_id", gql: "datacenter", desc: "The datacenter.", edge: true, required: true},
		}},
	}
	out := make([]func() resource.Resource, len(defs))
	for i := range defs {
		d := defs[i]
		out[i] = func() resource.Resource { c := d; return &c }
	}
	return out
}
