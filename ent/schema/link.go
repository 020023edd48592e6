package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"

	"github.com/virtflow/virtflow/domain/topology"
)

// Link is a cable between two ports. Links make the network diagram; a port is the end of at
// most one link (checked by a hook in package topology).
type Link struct {
	ent.Schema
}

// Mixin of the Link.
func (Link) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the Link.
func (Link) Fields() []ent.Field {
	return []ent.Field{
		field.String("label").Optional().MaxLen(128).Annotations(entgql.OrderField("LABEL")),
		field.Enum("kind").NamedValues(enumValues("Copper", "Fiber", "Dac", "Virtual")...).Default("FIBER"),
		field.Enum("status").NamedValues(enumValues("Planned", "Connected", "Decommissioning")...).
			Default("CONNECTED").Annotations(entgql.OrderField("STATUS")),
		field.Float("length_m").Optional().Min(0),
	}
}

// Edges of the Link.
func (Link) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("a_port", Port.Type).Ref("link_a").Unique().Required(),
		edge.From("b_port", Port.Type).Ref("link_b").Unique().Required(),
	}
}

// Annotations of the Link.
func (Link) Annotations() []schema.Annotation { return editable("links") }

// Hooks of the Link.
func (Link) Hooks() []ent.Hook {
	return []ent.Hook{
		topology.LinkPortsHook(),
	}
}
