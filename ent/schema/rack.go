package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/virtflow/virtflow/domain/topology"
)

// Rack stands on a floor at a row and position, has a height in units (42 by default) and sits
// in a power zone, a network zone and a rack zone (rack pair) that placement uses as failure
// domains. Its hosts inherit those zones unless they set their own.
type Rack struct {
	ent.Schema
}

// Mixin of the Rack.
func (Rack) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the Rack.
func (Rack) Fields() []ent.Field {
	return []ent.Field{
		slugField(),
		descriptionField(),
		field.String("row").Optional().MaxLen(32).Annotations(entgql.OrderField("ROW")),
		field.Int("position").Optional().NonNegative().Annotations(entgql.OrderField("POSITION")),
		field.Int("height").Default(42).Range(1, 60).Comment("height in rack units (U)"),
		field.Enum("status").NamedValues(enumValues("Active", "Reserved", "EmptySpare", "Decommissioning")...).
			Default("ACTIVE").Annotations(entgql.OrderField("STATUS")),
	}
}

// Edges of the Rack.
func (Rack) Edges() []ent.Edge {
	return append([]ent.Edge{
		edge.From("floor", Floor.Type).Ref("racks").Unique().Required(),
		edge.From("power_zone", PowerZone.Type).Ref("racks").Unique(),
		edge.From("network_zone", NetworkZone.Type).Ref("racks").Unique(),
		edge.From("rack_zone", RackZone.Type).Ref("racks").Unique(),
		edge.To("hosts", Host.Type).Annotations(entgql.RelayConnection(),
			entgql.Skip(entgql.SkipMutationCreateInput|entgql.SkipMutationUpdateInput)).
			Comment("mounted by setting the host's rack and position"),
		edge.To("alerts", Alert.Type).Annotations(entgql.RelayConnection(),
			entgql.Skip(entgql.SkipMutationCreateInput|entgql.SkipMutationUpdateInput)),
	}, maintainedBy("racks")...)
}

// Indexes of the Rack: names are unique on a floor.
func (Rack) Indexes() []ent.Index {
	return []ent.Index{index.Fields("name").Edges("floor").Unique()}
}

// Annotations of the Rack.
func (Rack) Annotations() []schema.Annotation { return editable("racks") }

// Hooks of the Rack.
func (Rack) Hooks() []ent.Hook {
	return []ent.Hook{topology.RackHook()}
}
