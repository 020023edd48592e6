package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/virtflow/virtflow/clients/apiclient"
)

// named is a data source that finds one object by its name through the type's list query
// (where: {name: …}) and exposes string attributes read from the answer. It covers the
// types whose lookup needs nothing beyond their own scalar fields, so adding one is a
// declaration, not code.
type named struct {
	name string // after "virtflow_", e.g. "tenant"
	desc string
	list string // the list query, e.g. "tenants"
	// key is the unique field looked up ("name" when empty); the attribute is its snake_case.
	key   string
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
	attrs := map[string]schema.Attribute{"id": computedString("The " + d.name + "'s id."), snake(d.keyField()): nameAttr()}
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
	key := d.keyField()
	keyAttr := path.Root(snake(key))
	var name types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, keyAttr, &name)...)
	if resp.Diagnostics.HasError() {
		return
	}
	sel := []string{"id", key}
	for _, a := range d.attrs {
		sel = append(sel, a.gql)
	}
	q := fmt.Sprintf("query($n: String) { list: %s(first: 2, where: {%s: $n}) { edges { node { %s } } } }", d.list, key, strings.Join(sel, " "))
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
		resp.Diagnostics.AddAttributeError(keyAttr, "No such "+d.name, fmt.Sprintf("NOT_FOUND: no %s is named %q (or the token may not read it)", d.name, name.ValueString()))
		return
	case 1:
	default:
		resp.Diagnostics.AddAttributeError(keyAttr, "Ambiguous "+d.name, fmt.Sprintf("more than one %s is named %q", d.name, name.ValueString()))
		return
	}
	n := r.List.Edges[0].Node
	set := func(attr string, v any) {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(attr), scalarString(v))...)
	}
	set("id", n["id"])
	set(snake(key), n[key])
	for _, a := range d.attrs {
		key, _, _ := strings.Cut(a.gql, " ")
		set(a.attr, n[key])
	}
}

// keyField is the unique field the data source looks up.
func (d *named) keyField() string {
	if d.key == "" {
		return "name"
	}
	return d.key
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
		{name: "power_zone", list: "powerZones", desc: "A power zone, by name (unique names only).", attrs: []namedAttr{
			{"description", "description", ""}, {"datacenter_id", "datacenter { id }", "The datacenter it is in."}}},
		{name: "rack_zone", list: "rackZones", desc: "A rack zone, by name (unique names only).", attrs: []namedAttr{
			{"description", "description", ""}, {"datacenter_id", "datacenter { id }", "The datacenter it is in."}}},
		{name: "network_zone", list: "networkZones", desc: "A network zone, by name (unique names only).", attrs: []namedAttr{
			{"description", "description", ""}, {"datacenter_id", "datacenter { id }", "The datacenter it is in."}}},
		{name: "cluster", list: "clusters", desc: "A compute cluster, by name.", attrs: []namedAttr{
			{"description", "description", ""}, {"region_id", "region { id }", "The region."}, {"datacenter_id", "datacenter { id }", "The datacenter."}}},
		{name: "compute_node", list: "computeNodes", desc: "A compute node, by name.", attrs: []namedAttr{
			{"status", "status", "Its status (READY, NOT_READY…)."}, {"host_id", "host { id }", "The host it runs on."}, {"cluster_id", "cluster { id }", "Its cluster."}}},
		{name: "host", list: "hosts", desc: "A host (server, switch, PDU…), by name.", attrs: []namedAttr{
			{"kind", "kind", "SERVER, SWITCH, ROUTER, PDU or OTHER."}, {"rack_id", "rack { id }", "The rack it is mounted in."}}},
		{name: "provider", list: "providers", desc: "A provider (libvirt, docker…), by name.", attrs: []namedAttr{
			{"kind", "kind", "What it provides."}, {"driver", "driver", "Its driver."}}},
		{name: "user", list: "users", key: "username", desc: "A user, by username.", attrs: []namedAttr{
			{"display_name", "displayName", "Name shown to people."}, {"email", "email", "Mail address."}, {"status", "status", "ACTIVE or DISABLED."}}},
		{name: "maintainer", list: "maintainers", desc: "A maintainer (a person responsible for equipment), by name.", attrs: []namedAttr{
			{"account", "account", "Account name."}, {"email", "email", "Mail address."}}},
		{name: "maintainer_group", list: "maintainerGroups", desc: "A maintainer group (a team), by name.", attrs: []namedAttr{
			{"description", "description", ""}, {"status", "status", "ACTIVE or INACTIVE."}}},
		{name: "check", list: "checks", desc: "A health check, by name.", attrs: []namedAttr{
			{"description", "description", ""}}},
		{name: "event_rule", list: "eventRules", desc: "An event rule, by name.", attrs: []namedAttr{
			{"kind", "kind", "FILTER, SILENCE, AGGREGATE or ACTION."}}},
		{name: "service_mesh", list: "serviceMeshes", desc: "A service mesh, by name.", attrs: []namedAttr{
			{"type", "type", "ISTIO, LINKERD, CILIUM or OTHER."}}},
		{name: "load_balancer", list: "loadBalancers", desc: "A load balancer, by name.", attrs: []namedAttr{
			{"tenant_id", "tenant { id }", "Its tenant."}}},
		{name: "volume", list: "volumes", desc: "A volume, by name (unique names only).", attrs: []namedAttr{
			{"tenant_id", "tenant { id }", "Its tenant."}}},
	}
	out := make([]func() datasource.DataSource, len(defs))
	for i := range defs {
		d := defs[i]
		out[i] = func() datasource.DataSource { c := d; return &c }
	}
	return out
}
