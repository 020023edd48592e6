package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
)

// MaintainerGroup is a team of maintainers with an admin maintainer; resources can name a group
// as responsible instead of (or besides) individuals.
type MaintainerGroup struct {
	ent.Schema
}

// Mixin of the MaintainerGroup.
func (MaintainerGroup) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the MaintainerGroup.
func (MaintainerGroup) Fields() []ent.Field {
	return []ent.Field{
		uniqueSlugField(),
		descriptionField(),
		field.Enum("status").NamedValues(enumValues("Active", "Inactive")...).Default("ACTIVE"),
	}
}

// Edges of the MaintainerGroup.
func (MaintainerGroup) Edges() []ent.Edge {
	return append([]ent.Edge{
		edge.From("admin", Maintainer.Type).Ref("administered_groups").Unique(),
		edge.To("members", Maintainer.Type).Annotations(entgql.RelayConnection()),
	}, responsibilities()...)
}

// Annotations of the MaintainerGroup.
func (MaintainerGroup) Annotations() []schema.Annotation { return editable("maintainerGroups") }
