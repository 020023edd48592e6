package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// GlobalService makes region services of several sites one redundant service through GSLB or
// anycast; its members are the region services.
type GlobalService struct {
	ent.Schema
}

// Mixin of the GlobalService.
func (GlobalService) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the GlobalService.
func (GlobalService) Fields() []ent.Field {
	return []ent.Field{
		slugField(),
		descriptionField(),
		field.Enum("mode").NamedValues(enumValues("Gslb", "Anycast")...).Default("GSLB"),
		field.String("fqdn").Optional().MaxLen(253),
		field.Enum("status").NamedValues(enumValues("Initializing", "Active", "Deleting", "Error")...).
			Default("INITIALIZING").Annotations(entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)),
	}
}

// Edges of the GlobalService.
func (GlobalService) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("tenant", Tenant.Type).Ref("global_services").Unique().Required(),
		edge.To("region_services", RegionService.Type).Annotations(entgql.RelayConnection()),
	}
}

// Indexes of the GlobalService.
func (GlobalService) Indexes() []ent.Index {
	return []ent.Index{index.Fields("name").Edges("tenant").Unique()}
}

// Annotations of the GlobalService.
func (GlobalService) Annotations() []schema.Annotation { return editable("globalServices") }
