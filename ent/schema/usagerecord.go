package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// UsageRecord is the reservation time of one resource and its price: billing is by reserved
// time, dedicated vCPUs cost more than shared ones and the host model can change the price.
// The resource is named by value so that the record outlives it.
//
// Deprecated: nothing writes usage records any more; the reservation ledger
// (ReservationInterval, package metering) and the usage query replace them.
type UsageRecord struct {
	ent.Schema
}

// Mixin of the UsageRecord.
func (UsageRecord) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the UsageRecord.
func (UsageRecord) Fields() []ent.Field {
	return []ent.Field{
		field.String("resource_type").NotEmpty(),
		field.Int("resource_id"),
		field.String("resource_name").Optional(),
		field.String("flavor_name").Optional(),
		field.String("host_model").Optional(),
		field.Time("started_at").Annotations(entgql.OrderField("STARTED_AT")),
		field.Time("ended_at").Optional().Nillable(),
		field.Float("price_per_hour").Min(0),
		field.Float("amount").Default(0).Min(0).Comment("price for the time reserved so far"),
	}
}

// Edges of the UsageRecord.
func (UsageRecord) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("tenant", Tenant.Type).Ref("usage_records").Unique().Required(),
	}
}

// Indexes of the UsageRecord.
func (UsageRecord) Indexes() []ent.Index {
	return []ent.Index{index.Fields("resource_type", "resource_id")}
}

// Annotations of the UsageRecord.
func (UsageRecord) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.QueryField("usageRecords").Directives(entgql.Deprecated("nothing writes usage records: use usage(tenantID:, from:, to:)")),
		entgql.RelayConnection(),
	}
}
