package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/virtflow/virtflow/clients/apiclient"
)

// lookup is a data source that finds one object by its unique name. M is its model; find
// returns how many objects matched (0, 1, or 2 meaning "more than one") and fills m from the
// first.
type lookup[M any] struct {
	name   string
	schema schema.Schema
	find   func(ctx context.Context, c *apiclient.Client, name string, m *M) (int, error)
	client *apiclient.Client
}

var _ datasource.DataSourceWithConfigure = (*lookup[struct{}])(nil)

// Metadata implements datasource.DataSource.
func (d *lookup[M]) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + d.name
}

// Schema implements datasource.DataSource.
func (d *lookup[M]) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = d.schema
}

// Configure implements datasource.DataSourceWithConfigure.
func (d *lookup[M]) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	if c, ok := req.ProviderData.(*apiclient.Client); ok {
		d.client = c
	}
}

// Read implements datasource.DataSource.
func (d *lookup[M]) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m M
	var name types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("name"), &name)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	n, err := d.find(ctx, d.client, name.ValueString(), &m)
	switch {
	case err != nil:
		addAPIError(&resp.Diagnostics, "Cannot look up virtflow_"+d.name, err, nil)
	case n == 0:
		resp.Diagnostics.AddAttributeError(path.Root("name"), "No such "+d.name, fmt.Sprintf("NOT_FOUND: no %s is named %q (or the token may not read it)", d.name, name.ValueString()))
	case n > 1:
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Ambiguous "+d.name, fmt.Sprintf("more than one %s is named %q", d.name, name.ValueString()))
	default:
		resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
	}
}

func computedString(desc string) schema.StringAttribute {
	return schema.StringAttribute{Computed: true, Description: desc}
}

func computedInt(desc string) schema.Int64Attribute {
	return schema.Int64Attribute{Computed: true, Description: desc}
}

func nameAttr() schema.StringAttribute {
	return schema.StringAttribute{Required: true, Description: "The unique name to look up."}
}

// ---------------------------------------------------------------- virtflow_region

type regionData struct {
	ID          types.String `tfsdk:"id"`
	Name        types.String `tfsdk:"name"`
	Description types.String `tfsdk:"description"`
	Status      types.String `tfsdk:"status"`
}

func regionDataSource() datasource.DataSource {
	return &lookup[regionData]{
		name: "region",
		schema: schema.Schema{Description: "A region, by name.", Attributes: map[string]schema.Attribute{
			"id": computedString("The region's id."), "name": nameAttr(), "description": computedString(""), "status": computedString("OPEN or CLOSED."),
		}},
		find: func(ctx context.Context, c *apiclient.Client, name string, m *regionData) (int, error) {
			r, err := apiclient.FindRegions(ctx, c, &name)
			if err != nil || len(r.Regions.Edges) == 0 {
				return 0, err
			}
			f := r.Regions.Edges[0].Node
			*m = regionData{ID: types.StringValue(f.Id), Name: types.StringValue(f.Name), Description: str(f.Description), Status: types.StringValue(string(f.Status))}
			return len(r.Regions.Edges), nil
		},
	}
}

// ---------------------------------------------------------------- virtflow_flavor

type flavorData struct {
	ID       types.String `tfsdk:"id"`
	Name     types.String `tfsdk:"name"`
	VCPUs    types.Int64  `tfsdk:"vcpus"`
	MemoryMB types.Int64  `tfsdk:"memory_mb"`
	DiskGB   types.Int64  `tfsdk:"disk_gb"`
	Disabled types.Bool   `tfsdk:"disabled"`
}

func flavorDataSource() datasource.DataSource {
	return &lookup[flavorData]{
		name: "flavor",
		schema: schema.Schema{Description: "A flavor (VM size), by name.", Attributes: map[string]schema.Attribute{
			"id": computedString("The flavor's id."), "name": nameAttr(), "vcpus": computedInt("vCPUs."), "memory_mb": computedInt("Memory in MB."),
			"disk_gb": computedInt("Root disk in GB."), "disabled": schema.BoolAttribute{Computed: true, Description: "Disabled flavors take no new VMs."},
		}},
		find: func(ctx context.Context, c *apiclient.Client, name string, m *flavorData) (int, error) {
			r, err := apiclient.FindFlavors(ctx, c, &name)
			if err != nil || len(r.Flavors.Edges) == 0 {
				return 0, err
			}
			f := r.Flavors.Edges[0].Node
			*m = flavorData{ID: types.StringValue(f.Id), Name: types.StringValue(f.Name), VCPUs: types.Int64Value(int64(f.Vcpus)),
				MemoryMB: types.Int64Value(int64(f.MemoryMB)), DiskGB: types.Int64Value(int64(f.DiskGB)), Disabled: types.BoolValue(f.Disabled)}
			return len(r.Flavors.Edges), nil
		},
	}
}

// ---------------------------------------------------------------- virtflow_image

type imageData struct {
	ID     types.String `tfsdk:"id"`
	Name   types.String `tfsdk:"name"`
	OSType types.String `tfsdk:"os_type"`
	Status types.String `tfsdk:"status"`
}

func imageDataSource() datasource.DataSource {
	return &lookup[imageData]{
		name: "image",
		schema: schema.Schema{Description: "An image, by name.", Attributes: map[string]schema.Attribute{
			"id": computedString("The image's id."), "name": nameAttr(), "os_type": computedString("OS type."), "status": computedString("Status."),
		}},
		find: func(ctx context.Context, c *apiclient.Client, name string, m *imageData) (int, error) {
			r, err := apiclient.FindImages(ctx, c, &name)
			if err != nil || len(r.Images.Edges) == 0 {
				return 0, err
			}
			f := r.Images.Edges[0].Node
			*m = imageData{ID: types.StringValue(f.Id), Name: types.StringValue(f.Name), OSType: types.StringValue(string(f.OsType)), Status: types.StringValue(string(f.Status))}
			return len(r.Images.Edges), nil
		},
	}
}

// ---------------------------------------------------------------- virtflow_network

type networkData struct {
	ID           types.String `tfsdk:"id"`
	Name         types.String `tfsdk:"name"`
	Description  types.String `tfsdk:"description"`
	CIDR         types.String `tfsdk:"cidr"`
	VLAN         types.Int64  `tfsdk:"vlan"`
	Gateway      types.String `tfsdk:"gateway"`
	Purpose      types.String `tfsdk:"purpose"`
	DNSServers   types.List   `tfsdk:"dns_servers"`
	TenantID     types.String `tfsdk:"tenant_id"`
	DatacenterID types.String `tfsdk:"datacenter_id"`
}

func networkDataSource() datasource.DataSource {
	return &lookup[networkData]{
		name: "network",
		schema: schema.Schema{Description: "A network, by name.", Attributes: map[string]schema.Attribute{
			"id": computedString("The network's id."), "name": nameAttr(), "description": computedString(""), "cidr": computedString("Prefix."),
			"vlan": computedInt("VLAN id."), "gateway": computedString("Gateway."), "purpose": computedString("Purpose."),
			"dns_servers": schema.ListAttribute{ElementType: types.StringType, Computed: true, Description: "Name servers."},
			"tenant_id":   computedString("Owning tenant."), "datacenter_id": computedString("Datacenter."),
		}},
		find: func(ctx context.Context, c *apiclient.Client, name string, m *networkData) (int, error) {
			r, err := apiclient.FindNetworks(ctx, c, &name)
			if err != nil || len(r.Networks.Edges) == 0 {
				return 0, err
			}
			var n networkModel
			n.set(&r.Networks.Edges[0].Node.NetworkFields)
			*m = networkData(n)
			return len(r.Networks.Edges), nil
		},
	}
}
