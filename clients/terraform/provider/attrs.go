package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/float64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// flag says how an attribute behaves; the attribute constructors below combine them.
type flag int

const (
	required flag = iota
	optional
	// computed: the server fills it (a default, a derived value) when the config leaves it out;
	// its planned value is the one in the state.
	computed
	// replace: a change replaces the object.
	replace
	sensitive
)

type flags map[flag]bool

func toFlags(fs []flag) flags {
	m := flags{}
	for _, f := range fs {
		m[f] = true
	}
	if !m[required] && !m[optional] && !m[computed] {
		m[optional] = true
	}
	return m
}

func idAttribute() schema.StringAttribute {
	return schema.StringAttribute{Computed: true, Description: "The object's GraphQL id.",
		PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}}
}

func stringAttr(desc string, fs ...flag) schema.StringAttribute {
	f := toFlags(fs)
	a := schema.StringAttribute{Description: desc, Required: f[required], Optional: f[optional], Computed: f[computed], Sensitive: f[sensitive]}
	if f[computed] {
		a.PlanModifiers = append(a.PlanModifiers, stringplanmodifier.UseStateForUnknown())
	}
	if f[replace] {
		a.PlanModifiers = append(a.PlanModifiers, stringplanmodifier.RequiresReplace())
	}
	if !f[computed] || f[optional] {
		a.Validators = append(a.Validators, nonEmpty{})
	}
	return a
}

// nonEmpty refuses "" for a string attribute: the API does not tell an empty optional string
// from an unset one, so "" is written by leaving the attribute out.
type nonEmpty struct{}

func (nonEmpty) Description(context.Context) string {
	return "must not be empty (leave it out instead)"
}

func (v nonEmpty) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (nonEmpty) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if !req.ConfigValue.IsNull() && !req.ConfigValue.IsUnknown() && req.ConfigValue.ValueString() == "" {
		resp.Diagnostics.AddAttributeError(req.Path, "Empty string", "Leave the attribute out instead of setting it to \"\".")
	}
}

func intAttr(desc string, fs ...flag) schema.Int64Attribute {
	f := toFlags(fs)
	a := schema.Int64Attribute{Description: desc, Required: f[required], Optional: f[optional], Computed: f[computed]}
	if f[computed] {
		a.PlanModifiers = append(a.PlanModifiers, int64planmodifier.UseStateForUnknown())
	}
	if f[replace] {
		a.PlanModifiers = append(a.PlanModifiers, int64planmodifier.RequiresReplace())
	}
	return a
}

func floatAttr(desc string, fs ...flag) schema.Float64Attribute {
	f := toFlags(fs)
	a := schema.Float64Attribute{Description: desc, Required: f[required], Optional: f[optional], Computed: f[computed]}
	if f[computed] {
		a.PlanModifiers = append(a.PlanModifiers, float64planmodifier.UseStateForUnknown())
	}
	if f[replace] {
		a.PlanModifiers = append(a.PlanModifiers, float64planmodifier.RequiresReplace())
	}
	return a
}

func boolAttr(desc string, fs ...flag) schema.BoolAttribute {
	f := toFlags(fs)
	a := schema.BoolAttribute{Description: desc, Required: f[required], Optional: f[optional], Computed: f[computed]}
	if f[computed] {
		a.PlanModifiers = append(a.PlanModifiers, boolplanmodifier.UseStateForUnknown())
	}
	if f[replace] {
		a.PlanModifiers = append(a.PlanModifiers, boolplanmodifier.RequiresReplace())
	}
	return a
}

func idSetAttr(desc string, fs ...flag) schema.SetAttribute {
	f := toFlags(fs)
	a := schema.SetAttribute{Description: desc, ElementType: types.StringType, Required: f[required], Optional: f[optional], Computed: f[computed]}
	if f[computed] {
		a.PlanModifiers = append(a.PlanModifiers, setplanmodifier.UseStateForUnknown())
	}
	if f[replace] {
		a.PlanModifiers = append(a.PlanModifiers, setplanmodifier.RequiresReplace())
	}
	return a
}
