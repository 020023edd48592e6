package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// LoadBalancer fronts one region service with a VIP.
type LoadBalancer struct {
	ent.Schema
}

// Mixin of the LoadBalancer.
func (LoadBalancer) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the LoadBalancer.
func (LoadBalancer) Fields() []ent.Field {
	return []ent.Field{
		slugField(),
		field.Enum("algorithm").NamedValues(enumValues("RoundRobin", "LeastConnections", "SourceHash")...).Default("ROUND_ROBIN"),
		field.Enum("status").NamedValues(enumValues("Initializing", "NotRealized", "Active", "Deleting", "Error")...).
			Default("INITIALIZING").Annotations(entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)).
			Comment("NOT_REALIZED: recorded with its VIP, but no node forwards traffic for it yet"),
		field.String("status_reason").Optional().MaxLen(1024).
			Annotations(entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)),
	}
}

// Edges of the LoadBalancer.
func (LoadBalancer) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("tenant", Tenant.Type).Ref("load_balancers").Unique().Required(),
		edge.From("region_service", RegionService.Type).Ref("load_balancer").Unique(),
		edge.To("vip", IPAddress.Type).Unique(),
	}
}

// Indexes of the LoadBalancer.
func (LoadBalancer) Indexes() []ent.Index {
	return []ent.Index{index.Fields("name").Edges("tenant").Unique()}
}

// Annotations of the LoadBalancer.
func (LoadBalancer) Annotations() []schema.Annotation { return editable("loadBalancers") }
