package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Floor is a machine room of a datacenter, named building-level-number as in seed 001
// (floor-1-1-1 is building 1, level 1, room 1). Names are unique within a datacenter.
type Floor struct {
	ent.Schema
}

// Mixin of the Floor.
func (Floor) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the Floor.
func (Floor) Fields() []ent.Field {
	return []ent.Field{
		slugField(),
		descriptionField(),
		field.Int("building").Optional().NonNegative(),
		field.Int("level").Optional(),
		field.Int("number").Optional().NonNegative(),
	}
}

// Edges of the Floor.
func (Floor) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("datacenter", Datacenter.Type).Ref("floors").Unique().Required(),
		edge.To("racks", Rack.Type).Annotations(entgql.RelayConnection()),
	}
}

// Indexes of the Floor.
func (Floor) Indexes() []ent.Index {
	return []ent.Index{index.Fields("name").Edges("datacenter").Unique()}
}

// Annotations of the Floor.
func (Floor) Annotations() []schema.Annotation { return editable("floors") }
