package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/virtflow/virtflow/domain/ipam"
)

// IPRange is a reserved range of a network's addresses (for DHCP pools, appliances, future
// use): the allocator never hands out an address inside it. Ranges of one network never
// overlap and lie inside the network's prefix.
type IPRange struct {
	ent.Schema
}

// Mixin of the IPRange.
func (IPRange) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the IPRange.
func (IPRange) Fields() []ent.Field {
	return []ent.Field{
		field.String("start_address").NotEmpty().Validate(validAddr).Annotations(entgql.OrderField("START_ADDRESS")).
			Comment("first address of the range"),
		field.String("end_address").NotEmpty().Validate(validAddr).Comment("last address of the range, inclusive"),
		descriptionField(),
	}
}

// Edges of the IPRange.
func (IPRange) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("network", Network.Type).Ref("ip_ranges").Unique().Required(),
	}
}

// Indexes of the IPRange.
func (IPRange) Indexes() []ent.Index {
	return []ent.Index{index.Fields("start_address").Edges("network").Unique(), index.Edges("network")}
}

// Annotations of the IPRange.
func (IPRange) Annotations() []schema.Annotation { return editable("ipRanges") }

// Hooks of the IPRange.
func (IPRange) Hooks() []ent.Hook {
	return []ent.Hook{
		ipam.RangeHook(),
	}
}
