package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
)

// Region is the unit users choose (e.g. tokyo1) and that is opened or closed as a whole.
type Region struct {
	ent.Schema
}

// Mixin of the Region.
func (Region) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the Region.
func (Region) Fields() []ent.Field {
	return []ent.Field{
		uniqueSlugField(),
		descriptionField(),
		field.Enum("status").NamedValues(enumValues("Open", "Closed")...).Default("OPEN").
			Annotations(entgql.OrderField("STATUS")),
	}
}

// Edges of the Region.
func (Region) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("availability_zones", AvailabilityZone.Type).Annotations(entgql.RelayConnection()),
		edge.To("datacenters", Datacenter.Type).Annotations(entgql.RelayConnection()),
		edge.To("clusters", Cluster.Type).Annotations(entgql.RelayConnection()),
		edge.To("region_services", RegionService.Type).Annotations(entgql.RelayConnection()),
		edge.To("kubernetes_clusters", KubernetesCluster.Type).Annotations(entgql.RelayConnection()),
		edge.To("virtual_machines", VirtualMachine.Type).Annotations(entgql.RelayConnection()),
	}
}

// Annotations of the Region.
func (Region) Annotations() []schema.Annotation { return editable("regions") }
