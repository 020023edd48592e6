package provider

import (
	"context"
	"net/http"
	"os"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/virtflow/virtflow/clients/apiclient"
)

// Environment variables read when the provider block leaves endpoint or token out.
const (
	EnvEndpoint = "VIRTFLOW_ENDPOINT"
	EnvToken    = "VIRTFLOW_TOKEN"
)

// New returns the provider factory served by cmd/terraform-provider-virtflow; version is the
// binary's version.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &virtflowProvider{version: version, getenv: os.Getenv} }
}

// virtflowProvider is the provider; getenv is injected so that tests need not set the
// process's environment.
type virtflowProvider struct {
	version string
	getenv  func(string) string
}

type providerModel struct {
	Endpoint types.String `tfsdk:"endpoint"`
	Token    types.String `tfsdk:"token"`
}

// Metadata implements provider.Provider.
func (p *virtflowProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "virtflow"
	resp.Version = p.version
}

// Schema implements provider.Provider.
func (p *virtflowProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Manages a VirtFlow private cloud through its GraphQL API.",
		Attributes: map[string]schema.Attribute{
			"endpoint": schema.StringAttribute{
				Optional:    true,
				Description: "The API server, e.g. http://127.0.0.1:8080 (the GraphQL path /query is added when no path is given). Default: $" + EnvEndpoint + ".",
			},
			"token": schema.StringAttribute{
				Optional:    true,
				Sensitive:   true,
				Description: "An API token (sent as Authorization: Bearer). Default: $" + EnvToken + ".",
			},
		},
	}
}

// Configure implements provider.Provider: it builds the API client shared by every resource.
func (p *virtflowProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var cfg providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	endpoint, token := p.getenv(EnvEndpoint), p.getenv(EnvToken)
	if !cfg.Endpoint.IsNull() && !cfg.Endpoint.IsUnknown() {
		endpoint = cfg.Endpoint.ValueString()
	}
	if !cfg.Token.IsNull() && !cfg.Token.IsUnknown() {
		token = cfg.Token.ValueString()
	}
	if endpoint == "" {
		resp.Diagnostics.AddAttributeError(path.Root("endpoint"), "No VirtFlow endpoint",
			"Set endpoint in the provider block or the environment variable "+EnvEndpoint+".")
	}
	if token == "" {
		resp.Diagnostics.AddAttributeError(path.Root("token"), "No VirtFlow API token",
			"Set token in the provider block or the environment variable "+EnvToken+".")
	}
	if resp.Diagnostics.HasError() {
		return
	}
	c, err := apiclient.New(endpoint, token)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("endpoint"), "Invalid VirtFlow endpoint", err.Error())
		return
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 32
	c.HTTP = &http.Client{Transport: tr, Timeout: 2 * time.Minute}
	c.UserAgent = "terraform-provider-virtflow/" + p.version
	resp.ResourceData = c
	resp.DataSourceData = c
}

// Resources implements provider.Provider.
func (p *virtflowProvider) Resources(context.Context) []func() resource.Resource {
	return append([]func() resource.Resource{
		tenantResource,
		quotaResource,
		networkResource,
		ipAddressResource,
		sshKeyResource,
		securityRuleResource,
		virtualMachineResource,
		flavorResource,
		volumeResource,
		regionServiceResource,
		kubernetesClusterResource,
		loadBalancerResource,
		globalServiceResource,
		rackResource,
		hostResource,
		portResource,
		cableResource,
		snapshotResource,
		backupResource,
	}, declaredResources()...)
}

// DataSources implements provider.Provider.
func (p *virtflowProvider) DataSources(context.Context) []func() datasource.DataSource {
	return append([]func() datasource.DataSource{
		regionDataSource,
		flavorDataSource,
		imageDataSource,
		networkDataSource,
	}, namedDataSources()...)
}

// Address is the provider's registry address, the name a configuration's required_providers
// and a dev_overrides entry use.
const Address = "registry.terraform.io/virtflow/virtflow"
