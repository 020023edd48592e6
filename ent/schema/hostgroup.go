package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
)

// HostGroup is a flexible grouping of hosts by location, load or purpose. Tenant quotas are
// set per host group (seed 004).
type HostGroup struct {
	ent.Schema
}

// Mixin of the HostGroup.
func (HostGroup) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the HostGroup.
func (HostGroup) Fields() []ent.Field { return []ent.Field{uniqueSlugField(), descriptionField()} }

// Edges of the HostGroup.
func (HostGroup) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("hosts", Host.Type).Annotations(entgql.RelayConnection()),
		edge.To("quotas", Quota.Type).Annotations(entgql.RelayConnection()),
	}
}

// Annotations of the HostGroup.
func (HostGroup) Annotations() []schema.Annotation { return editable("hostGroups") }
