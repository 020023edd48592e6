package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"

	"github.com/virtflow/virtflow/clients/apiclient"
)

// crud is a resource described by its schema and four calls on the API. M is the resource's
// model (a struct with tfsdk tags and an ID field). Each call fills the model it is given
// with what the API answered, so that the state is always the server's view.
type crud[M any] struct {
	// name is the type name after "virtflow_", e.g. "tenant".
	name   string
	schema schema.Schema
	// fields maps GraphQL input fields (extensions.field) to attribute names, where they differ
	// beyond camelCase → snake_case.
	fields map[string]string
	id     func(m *M) string
	create func(ctx context.Context, c *apiclient.Client, plan *M) error
	// read returns false when the object is gone.
	read   func(ctx context.Context, c *apiclient.Client, m *M) (bool, error)
	update func(ctx context.Context, c *apiclient.Client, plan, state *M) error
	delete func(ctx context.Context, c *apiclient.Client, state *M) error

	client *apiclient.Client
}

var (
	_ resource.ResourceWithConfigure   = (*crud[struct{}])(nil)
	_ resource.ResourceWithImportState = (*crud[struct{}])(nil)
)

// Metadata implements resource.Resource.
func (r *crud[M]) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + r.name
}

// Schema implements resource.Resource.
func (r *crud[M]) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = r.schema
}

// Configure implements resource.ResourceWithConfigure.
func (r *crud[M]) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	if req.ProviderData == nil {
		return
	}
	c, ok := req.ProviderData.(*apiclient.Client)
	if !ok {
		resp.Diagnostics.AddError("Unexpected provider data", fmt.Sprintf("got %T", req.ProviderData))
		return
	}
	r.client = c
}

// Create implements resource.Resource.
func (r *crud[M]) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan M
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	err := r.create(ctx, r.client, &plan)
	if err != nil {
		// An object created but not ready (a VM that went to ERROR) is kept in the state, so
		// that the next apply replaces it rather than leaking it.
		var partial *partialError
		if errors.As(err, &partial) {
			resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		}
		addAPIError(&resp.Diagnostics, "Cannot create virtflow_"+r.name, err, r.fields)
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// Read implements resource.Resource.
func (r *crud[M]) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state M
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	found, err := r.read(ctx, r.client, &state)
	if err != nil {
		addAPIError(&resp.Diagnostics, "Cannot read virtflow_"+r.name+" "+r.id(&state), err, r.fields)
		return
	}
	if !found {
		resp.State.RemoveResource(ctx)
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Update implements resource.Resource.
func (r *crud[M]) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state M
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := r.update(ctx, r.client, &plan, &state); err != nil {
		addAPIError(&resp.Diagnostics, "Cannot update virtflow_"+r.name+" "+r.id(&state), err, r.fields)
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// Delete implements resource.Resource. An object already gone counts as deleted.
func (r *crud[M]) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state M
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := r.delete(ctx, r.client, &state); err != nil && !apiclient.IsNotFound(err) {
		addAPIError(&resp.Diagnostics, "Cannot delete virtflow_"+r.name+" "+r.id(&state), err, r.fields)
	}
}

// ImportState implements resource.ResourceWithImportState: the import id is the object's
// GraphQL id, or its name where importLists says names are unique.
func (r *crud[M]) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id := req.ID
	if list, ok := importLists[r.name]; ok && !isID(id) {
		var err error
		if id, err = lookupID(ctx, r.client, list, "name", req.ID); err != nil {
			resp.Diagnostics.AddError("Cannot import virtflow_"+r.name+" "+req.ID, err.Error())
			return
		}
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), id)...)
}

// newResource returns c as a resource.Resource.
func newResource[M any](c crud[M]) resource.Resource { return &c }

// partialError is a create that made an object which did not become ready: the object's id
// is in the model and the state keeps it.
type partialError struct{ err error }

func (e *partialError) Error() string { return e.err.Error() }
func (e *partialError) Unwrap() error { return e.err }

// addAPIError adds err as a diagnostic: an API error naming an input field is attached to
// that attribute, with its code in the detail.
func addAPIError(d *diag.Diagnostics, summary string, err error, fields map[string]string) {
	var api *apiclient.Error
	if !errors.As(err, &api) {
		d.AddError(summary, err.Error())
		return
	}
	for _, ge := range api.Errors {
		detail := ge.Message
		if c := ge.Code(); c != "" {
			detail = fmt.Sprintf("%s: %s", c, ge.Message)
		}
		if f := ge.Field(); f != "" {
			attr, ok := fields[f]
			if !ok {
				attr = snake(strings.TrimSuffix(f, "ID")) + map[bool]string{true: "_id", false: ""}[strings.HasSuffix(f, "ID")]
			}
			detail += fmt.Sprintf(" (API field %q)", f)
			d.AddAttributeError(path.Root(attr), summary, detail)
			continue
		}
		d.AddError(summary, detail)
	}
}

// snake turns a GraphQL camelCase name into a Terraform snake_case one ("dnsName" →
// "dns_name", "memoryMB" → "memory_mb", "sizeGB" → "size_gb").
func snake(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		upper := r >= 'A' && r <= 'Z'
		if upper && i > 0 {
			prevLower := rs[i-1] >= 'a' && rs[i-1] <= 'z'
			nextLower := i+1 < len(rs) && rs[i+1] >= 'a' && rs[i+1] <= 'z'
			prevUpper := rs[i-1] >= 'A' && rs[i-1] <= 'Z'
			if prevLower || (prevUpper && nextLower) {
				b.WriteByte('_')
			}
		}
		if upper {
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
