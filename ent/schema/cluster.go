package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"

	"github.com/virtflow/virtflow/ent/schema/fieldtype"
)

// Cluster is the unit virtual resources belong to: a set of nodes in one datacenter of a
// region. Cluster scheduling prefers a higher weight and breaks ties by free capacity.
type Cluster struct {
	ent.Schema
}

// Mixin of the Cluster.
func (Cluster) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the Cluster.
func (Cluster) Fields() []ent.Field {
	return []ent.Field{
		uniqueSlugField(),
		descriptionField(),
		field.JSON("labels", fieldtype.Labels{}).Optional(),
		field.Int("weight").Default(100).Range(0, 10000).Annotations(entgql.OrderField("WEIGHT")),
	}
}

// Edges of the Cluster.
func (Cluster) Edges() []ent.Edge {
	return append([]ent.Edge{
		edge.From("region", Region.Type).Ref("clusters").Unique().Required(),
		edge.From("datacenter", Datacenter.Type).Ref("clusters").Unique().Required(),
		edge.To("nodes", ComputeNode.Type).Annotations(entgql.RelayConnection()),
		edge.From("checks", Check.Type).Ref("clusters").Comment("the checks naming this cluster (a cluster may be named by several checks)").
			Annotations(entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)),
		edge.To("virtual_machines", VirtualMachine.Type).Annotations(entgql.RelayConnection()),
		edge.To("events", Event.Type).Annotations(entgql.RelayConnection(),
			entgql.Skip(entgql.SkipMutationCreateInput|entgql.SkipMutationUpdateInput)),
	}, maintainedBy("clusters")...)
}

// Annotations of the Cluster.
func (Cluster) Annotations() []schema.Annotation { return editable("clusters") }

// Hooks of the Cluster.
func (Cluster) Hooks() []ent.Hook {
	return []ent.Hook{
		validateLabels(),
	}
}
