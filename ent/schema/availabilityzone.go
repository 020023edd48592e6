package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/index"
)

// AvailabilityZone is a logical, user-visible zone of a region. Users see regions and zones,
// never the physical layout; placement spreads across zones by default.
type AvailabilityZone struct {
	ent.Schema
}

// Mixin of the AvailabilityZone.
func (AvailabilityZone) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the AvailabilityZone.
func (AvailabilityZone) Fields() []ent.Field {
	return []ent.Field{slugField(), descriptionField()}
}

// Edges of the AvailabilityZone.
func (AvailabilityZone) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("region", Region.Type).Ref("availability_zones").Unique().Required(),
		edge.To("nodes", ComputeNode.Type).Annotations(entgql.RelayConnection()),
		// A VM's zone is chosen at its create, not by editing the zone.
		edge.To("virtual_machines", VirtualMachine.Type).
			Annotations(entgql.RelayConnection(), entgql.Skip(entgql.SkipMutationCreateInput|entgql.SkipMutationUpdateInput)),
	}
}

// Indexes of the AvailabilityZone: names are unique within a region.
func (AvailabilityZone) Indexes() []ent.Index {
	return []ent.Index{index.Fields("name").Edges("region").Unique()}
}

// Annotations of the AvailabilityZone.
func (AvailabilityZone) Annotations() []schema.Annotation { return editable("availabilityZones") }
