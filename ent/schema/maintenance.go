package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
)

// Maintenance records who does what, where, from when to when. Operators open and close it; the
// system opens one for automatic work such as a drain.
type Maintenance struct {
	ent.Schema
}

// Mixin of the Maintenance.
func (Maintenance) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// serverSet keeps a field out of the create and update inputs: the server sets it.
var serverSet = entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)

// Fields of the Maintenance.
func (Maintenance) Fields() []ent.Field {
	return []ent.Field{
		field.String("title").NotEmpty().MaxLen(256).Annotations(entgql.OrderField("TITLE")),
		descriptionField(),
		field.Enum("status").NamedValues(enumValues("Planned", "InProgress", "Closed")...).Default("PLANNED").
			Annotations(entgql.OrderField("STATUS")),
		field.Time("starts_at").Annotations(entgql.OrderField("STARTS_AT")),
		field.Time("ends_at").Optional().Nillable().Annotations(entgql.OrderField("ENDS_AT")),
		// Both are the server's: the viewer who opened it (hook byViewer) and whether the
		// system did (drains set it); no client input sets them.
		field.String("opened_by").Optional().MaxLen(128).Annotations(serverSet).
			Comment("who opened it: the viewer, or the component that opened it on its own"),
		field.Bool("automatic").Default(false).Annotations(serverSet).
			Comment("opened by the system, e.g. for a drain"),
	}
}

// Edges of the Maintenance.
func (Maintenance) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("maintainer", Maintainer.Type).Ref("maintenances").Unique(),
		edge.To("hosts", Host.Type).Annotations(entgql.RelayConnection()),
		edge.To("nodes", ComputeNode.Type).Annotations(entgql.RelayConnection()),
	}
}

// Annotations of the Maintenance.
func (Maintenance) Annotations() []schema.Annotation { return editable("maintenances") }

// Hooks of the Maintenance.
func (Maintenance) Hooks() []ent.Hook {
	return []ent.Hook{
		timeOrder("starts_at", "ends_at", "endsAt"),
		byViewer("opened_by"),
	}
}
