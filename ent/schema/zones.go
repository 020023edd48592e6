package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/index"
)

// PowerZone is a power failure domain of a datacenter: a PDU or power system feeding racks.
type PowerZone struct {
	ent.Schema
}

// Mixin of the PowerZone.
func (PowerZone) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the PowerZone.
func (PowerZone) Fields() []ent.Field { return []ent.Field{slugField(), descriptionField()} }

// Edges of the PowerZone.
func (PowerZone) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("datacenter", Datacenter.Type).Ref("power_zones").Unique().Required(),
		edge.To("racks", Rack.Type).Annotations(entgql.RelayConnection()),
		edge.To("hosts", Host.Type).Annotations(entgql.RelayConnection()),
		edge.To("alerts", Alert.Type).Annotations(entgql.RelayConnection(),
			entgql.Skip(entgql.SkipMutationCreateInput|entgql.SkipMutationUpdateInput)),
	}
}

// Indexes of the PowerZone.
func (PowerZone) Indexes() []ent.Index {
	return []ent.Index{index.Fields("name").Edges("datacenter").Unique()}
}

// Annotations of the PowerZone.
func (PowerZone) Annotations() []schema.Annotation { return editable("powerZones") }

// NetworkZone is a network failure domain: the L3 management layer a group of racks hangs off.
type NetworkZone struct {
	ent.Schema
}

// Mixin of the NetworkZone.
func (NetworkZone) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the NetworkZone.
func (NetworkZone) Fields() []ent.Field { return []ent.Field{slugField(), descriptionField()} }

// Edges of the NetworkZone.
func (NetworkZone) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("datacenter", Datacenter.Type).Ref("network_zones").Unique().Required(),
		edge.To("racks", Rack.Type).Annotations(entgql.RelayConnection()),
		edge.To("hosts", Host.Type).Annotations(entgql.RelayConnection()),
		edge.To("networks", Network.Type).Annotations(entgql.RelayConnection()),
	}
}

// Indexes of the NetworkZone.
func (NetworkZone) Indexes() []ent.Index {
	return []ent.Index{index.Fields("name").Edges("datacenter").Unique()}
}

// Annotations of the NetworkZone.
func (NetworkZone) Annotations() []schema.Annotation { return editable("networkZones") }

// RackZone is a rack failure domain grouping paired racks whose rack-leaf routers cross-wire.
type RackZone struct {
	ent.Schema
}

// Mixin of the RackZone.
func (RackZone) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the RackZone.
func (RackZone) Fields() []ent.Field { return []ent.Field{slugField(), descriptionField()} }

// Edges of the RackZone.
func (RackZone) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("datacenter", Datacenter.Type).Ref("rack_zones").Unique().Required(),
		edge.To("racks", Rack.Type).Annotations(entgql.RelayConnection()),
		edge.To("hosts", Host.Type).Annotations(entgql.RelayConnection()),
	}
}

// Indexes of the RackZone.
func (RackZone) Indexes() []ent.Index {
	return []ent.Index{index.Fields("name").Edges("datacenter").Unique()}
}

// Annotations of the RackZone.
func (RackZone) Annotations() []schema.Annotation { return editable("rackZones") }
