package provider

import (
	"context"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Conversions between Terraform values and the generated client's Go values: a null or
// unknown value is a nil pointer (GraphQL null, "not given"), and back.

func strPtr(v types.String) *string {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	s := v.ValueString()
	return &s
}

func intPtr(v types.Int64) *int {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	i := int(v.ValueInt64())
	return &i
}

func floatPtr(v types.Float64) *float64 {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	f := v.ValueFloat64()
	return &f
}

func boolPtr(v types.Bool) *bool {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	b := v.ValueBool()
	return &b
}

// enumPtr converts an optional string attribute into a pointer to a generated enum type.
func enumPtr[E ~string](v types.String) *E {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	e := E(v.ValueString())
	return &e
}

// str is an optional string field: the API answers "" for a string that was never set, which
// is null here (and optional string attributes refuse "", see nonEmpty).
func str(p *string) types.String {
	if p == nil || *p == "" {
		return types.StringNull()
	}
	return types.StringValue(*p)
}

// intv is an optional number field: the API answers 0 for one never set (no VLAN, no
// position, no speed), which is null here.
func intv(p *int) types.Int64 {
	if p == nil || *p == 0 {
		return types.Int64Null()
	}
	return types.Int64Value(int64(*p))
}

// floatv is intv for floats.
func floatv(p *float64) types.Float64 {
	if p == nil || *p == 0 {
		return types.Float64Null()
	}
	return types.Float64Value(*p)
}

// ref is the id of an optional edge ({ id } or null).
func ref[T any, PT interface {
	*T
	GetId() string
}](p PT) types.String {
	if p == nil {
		return types.StringNull()
	}
	return types.StringValue(p.GetId())
}

// clear reports whether an attribute set before is now left out, so that the update must
// send the API's clearX.
func clear[V interface{ IsNull() bool }](plan, state V) *bool {
	if plan.IsNull() && !state.IsNull() {
		t := true
		return &t
	}
	return nil
}

// stringSet turns a set attribute into its strings (nil for null or unknown).
func stringSet(ctx context.Context, v types.Set) []string {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	var out []string
	v.ElementsAs(ctx, &out, false)
	sort.Strings(out)
	return out
}

// idSet is the set of the ids of edges.
func idSet[T any, PT interface {
	*T
	GetId() string
}](items []T) types.Set {
	ids := make([]string, 0, len(items))
	for i := range items {
		ids = append(ids, PT(&items[i]).GetId())
	}
	return stringsSet(ids)
}

func stringsSet(ss []string) types.Set {
	vals := make([]attr.Value, 0, len(ss))
	for _, s := range ss {
		vals = append(vals, types.StringValue(s))
	}
	set, _ := types.SetValue(types.StringType, vals)
	return set
}

func stringList(ctx context.Context, v types.List) []string {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	var out []string
	v.ElementsAs(ctx, &out, false)
	return out
}

func stringsList(ss []string) types.List {
	if ss == nil {
		return types.ListNull(types.StringType)
	}
	vals := make([]attr.Value, 0, len(ss))
	for _, s := range ss {
		vals = append(vals, types.StringValue(s))
	}
	l, _ := types.ListValue(types.StringType, vals)
	return l
}

func stringMap(ctx context.Context, v types.Map) *map[string]string {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	out := map[string]string{}
	v.ElementsAs(ctx, &out, false)
	return &out
}

func mapv(p *map[string]string) types.Map {
	if p == nil || len(*p) == 0 {
		return types.MapNull(types.StringType)
	}
	vals := map[string]attr.Value{}
	for k, s := range *p {
		vals[k] = types.StringValue(s)
	}
	m, _ := types.MapValue(types.StringType, vals)
	return m
}
