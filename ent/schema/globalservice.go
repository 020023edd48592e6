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
	system := entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)
	return []ent.Field{
		slugField(),
		descriptionField(),
		field.Enum("mode").NamedValues(enumValues("Gslb", "Anycast")...).Default("GSLB"),
		field.String("fqdn").Optional().MaxLen(253),
		field.Int("ttl").Default(30).Range(1, 86400).Comment("seconds resolvers may cache the GSLB answer"),
		field.Enum("status").NamedValues(enumValues("Initializing", "Active", "NotServed", "Deleting", "Error")...).
			Default("INITIALIZING").Annotations(system).
			Comment("ACTIVE only while served: GSLB answers or anycast announces at least one healthy region's VIP"),
		field.String("status_reason").Optional().MaxLen(1024).Annotations(system),
		field.JSON("dns_answer", []string{}).Optional().Annotations(system).
			Comment("the VIPs the authoritative DNS server answers the FQDN with (GSLB), or announces (anycast), as last pushed"),
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
