package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// HookDelivery is one notification an event rule's CALL_HOOK action sent (or tries to send):
// the URL, the idempotency key the receiver sees, each attempt's outcome. It is the delivery
// history Alertmanager lacks; only the system (package alerting) writes it.
type HookDelivery struct {
	ent.Schema
}

// Mixin of the HookDelivery.
func (HookDelivery) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the HookDelivery.
func (HookDelivery) Fields() []ent.Field {
	return []ent.Field{
		field.String("url").NotEmpty().MaxLen(2048),
		field.String("idempotency_key").NotEmpty().MaxLen(256).Unique().
			Comment("sent as Idempotency-Key; a redelivery carries the same key"),
		field.Enum("status").NamedValues(enumValues("Pending", "Delivered", "Failed")...).Default("PENDING").
			Annotations(entgql.OrderField("STATUS")),
		field.Int("attempts").Default(0).NonNegative(),
		field.Int("response_status").Optional().Comment("HTTP status of the last attempt"),
		field.String("last_error").Optional().MaxLen(1024),
		field.Text("payload").MaxLen(1 << 20).Comment("the JSON body sent"),
		field.Time("delivered_at").Optional().Nillable().Annotations(entgql.OrderField("DELIVERED_AT")),
		field.Time("last_attempt_at").Optional().Nillable(),
	}
}

// Edges of the HookDelivery.
func (HookDelivery) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("rule", EventRule.Type).Ref("deliveries").Unique(),
		edge.From("alert", Alert.Type).Ref("deliveries").Unique(),
		edge.From("maintainer_group", MaintainerGroup.Type).Ref("deliveries").Unique().
			Comment("the group the delivery was routed to, when routed by responsibility"),
	}
}

// Indexes of the HookDelivery.
func (HookDelivery) Indexes() []ent.Index { return []ent.Index{index.Fields("status")} }

// Annotations of the HookDelivery.
func (HookDelivery) Annotations() []schema.Annotation { return readOnly("hookDeliveries") }
