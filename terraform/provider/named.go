package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/virtflow/virtflow/apiclient"
)

// named is a data source that finds one object by its name through the type's list query
// (where: {name: …}) and exposes string attributes read from the answer. It covers the
// types whose lookup needs nothing beyond their own scalar fields, so adding one is a
// declaration, not code.
type named struct {
	name  string // after "virtflow_", e.g. "tenant"
	desc  string
	list  string // the list query, e.g. "tenants"
	attrs []namedAttr
	// client is set by Configure.
	client *apiclient.Client
}

// namedAttr is one computed string attribute: its Terraform name and the GraphQL selection
// it is read from (a field, or "edge { id }" for an edge's id).
type namedAttr struct{ attr, gql, desc string }

var _ datasource.DataSourceWithConfigure = (*named)(nil)

// Metadata implements datasource.DataSource.
func (d *named) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + d.name
}

// Schema implements datasource.DataSource.
func (d *named) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attrs := map[string]schema.Attribute{"id": computedString("The " + d.name + "'s id."), "name": nameAttr()}
	for _, a := range d.attrs {
		attrs[a.attr] = computedString(a.desc)
	}
	resp.Schema = schema.Schema{Description: d.desc, Attributes: attrs}
}

// Configure implements datasource.DataSourceWithConfigure.
func (d *named) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	if c, ok := req.ProviderData.(*apiclient.Client); ok {
		d.client = c
	}
}

// Read implements datasource.DataSource.
func (d *named) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var name types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("name"), &name)...)
	if resp.Diagnostics.HasError() {
		return
	}
	sel := []string{"id", "name"}
	for _, a := range d.attrs {
		sel = append(sel, a.gql)
	}
	q := fmt.Sprintf("query($n: String) { list: %s(first: 2, where: {name: $n}) { edges { node { %s } } } }", d.list, strings.Join(sel, " "))
	var r struct {
		List struct {
			Edges []struct{ Node map[string]any }
		}
	}
	if err := d.client.Do(ctx, q, map[string]any{"n": name.ValueString()}, &r); err != nil {
		addAPIError(&resp.Diagnostics, "Cannot look up virtflow_"+d.name, err, nil)
		return
	}
	switch len(r.List.Edges) {
	case 0:
		resp.Diagnostics.AddAttributeError(path.Root("name"), "No such "+d.name, fmt.Sprintf("NOT_FOUND: no %s is named %q (or the token may not read it)", d.name, name.ValueString()))
		return
	case 1:
	default:
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Ambiguous "+d.name, fmt.Sprintf("more than one %s is named %q", d.name, name.ValueString()))
		return
	}
	n := r.List.Edges[0].Node
	set := func(attr string, v any) {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(attr), scalarString(v))...)
	}
	set("id", n["id"])
	set("name", n["name"])
	for _, a := range d.attrs {
		key, _, _ := strings.Cut(a.gql, " ")
		set(a.attr, n[key])
	}
}

// scalarString is a JSON value as a Terraform string: null stays null, an edge ({id}) is its
// id, numbers print as integers where they are whole.
func scalarString(v any) types.String {
	switch x := v.(type) {
	case nil:
		return types.StringNull()
	case string:
		return types.StringValue(x)
	case float64:
		if x == float64(int64(x)) {
			return types.StringValue(fmt.Sprint(int64(x)))
		}
		return types.StringValue(fmt.Sprint(x))
	case map[string]any:
		return scalarString(x["id"])
	}
	return types.StringValue(fmt.Sprint(v))
}

// namedDataSources are the data sources that look an object up by name.
func namedDataSources() []func() datasource.DataSource {
	defs := []named{
		{name: "tenant", list: "tenants", desc: "A tenant, by name.", attrs: []namedAttr{
			{"display_name", "displayName", "Name shown to people."}, {"description", "description", ""}, {"status", "status", "ACTIVE or SUSPENDED."}}},
		{name: "datacenter", list: "datacenters", desc: "A datacenter, by name.", attrs: []namedAttr{
			{"description", "description", ""}, {"region_id", "region { id }", "The region it is in."}}},
		{name: "floor", list: "floors", desc: "A floor of a datacenter, by name (unique names only).", attrs: []namedAttr{
			{"datacenter_id", "datacenter { id }", "The datacenter it is in."}}},
		{name: "rack", list: "racks", desc: "A rack, by name (unique names only).", attrs: []namedAttr{
			{"floor_id", "floor { id }", "The floor it stands on."}}},
		{name: "availability_zone", list: "availabilityZones", desc: "An availability zone, by name.", attrs: []namedAttr{
			{"region_id", "region { id }", "The region it is in."}}},
		{name: "host_group", list: "hostGroups", desc: "A host group (where quotas are set), by name.", attrs: []namedAttr{
			{"description", "description", ""}}},
		{name: "ssh_key", list: "sshKeys", desc: "An SSH key, by name.", attrs: []namedAttr{
			{"fingerprint", "fingerprint", "Its SHA256 fingerprint."}}},
		{name: "backup", list: "backups", desc: "A backup of a VM's root disk, by name (unique names only: names are unique per tenant), to restore.", attrs: []namedAttr{
			{"status", "status", "AVAILABLE once it can be restored."}, {"size_gb", "sizeGB", "Its size in GiB (the restored VM's flavor must hold it)."},
			{"tenant_id", "tenant { id }", "Its tenant."}, {"region_id", "region { id }", "The region it is restored in."},
			{"virtual_machine_id", "virtualMachine { id }", "The VM it copies (null once deleted)."}}},
	}
	out := make([]func() datasource.DataSource, len(defs))
	for i := range defs {
		d := defs[i]
		out[i] = func() datasource.DataSource { c := d; return &c }
	}
	return out
}
