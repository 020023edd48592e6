package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/virtflow/virtflow/ent/schema/fieldtype"
)

// Alert is raised by event rules (or by hand): fatal, critical or warning. A repeat with the same
// fingerprint only updates its time and count; it stays open until an operator closes it.
// Fatal alerts are shown to affected tenants.
type Alert struct {
	ent.Schema
}

// Mixin of the Alert.
func (Alert) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the Alert.
func (Alert) Fields() []ent.Field {
	system := entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)
	return []ent.Field{
		nameField(),
		field.Enum("severity").NamedValues(enumValues("Fatal", "Critical", "Warning")...).Annotations(entgql.OrderField("SEVERITY")),
		field.Enum("status").NamedValues(enumValues("Open", "Closed")...).Default("OPEN").Annotations(entgql.OrderField("STATUS")),
		field.Text("message").Optional().MaxLen(65536),
		field.String("fingerprint").Optional().MaxLen(256).Comment("deduplication key; one open alert per fingerprint"),
		field.Int("occurrences").Default(1).Positive().Annotations(system),
		field.Time("first_seen_at").Default(time.Now).Annotations(system),
		field.Time("last_seen_at").Default(time.Now).Annotations(entgql.OrderField("LAST_SEEN_AT"), system),
		field.Time("closed_at").Optional().Nillable(),
		field.String("closed_by").Optional().MaxLen(128),
		field.Time("acknowledged_at").Optional().Nillable().Annotations(system),
		field.String("acknowledged_by").Optional().MaxLen(128).Annotations(system),
		field.JSON("labels", fieldtype.Labels{}).Optional().Annotations(system).
			Comment("labels of an alert received from Prometheus Alertmanager"),
		field.String("source").Optional().MaxLen(64).Annotations(system).
			Comment("who raised it: a rule (rule:<name>), alertmanager, or empty when made by hand"),
	}
}

// Edges of the Alert.
func (Alert) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("node", ComputeNode.Type).Ref("alerts").Unique(),
		edge.From("host", Host.Type).Ref("alerts").Unique(),
		edge.From("rack", Rack.Type).Ref("alerts").Unique().Comment("a whole rack's alert (e.g. from Alertmanager)"),
		edge.From("power_zone", PowerZone.Type).Ref("alerts").Unique().Comment("a power zone's (PDU system's) alert"),
		edge.To("suppresses", Alert.Type).
			Annotations(entgql.RelayConnection(), entgql.Skip(entgql.SkipMutationCreateInput|entgql.SkipMutationUpdateInput)).
			From("suppressed_by").Unique().
			Annotations(entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)).
			Comment("the open alert on the power zone, PDU, switch or rack this host's alert depends on (package alerting)"),
		edge.To("events", Event.Type).Annotations(entgql.RelayConnection()),
		edge.To("deliveries", HookDelivery.Type).Annotations(entgql.RelayConnection(),
			entgql.Skip(entgql.SkipMutationCreateInput|entgql.SkipMutationUpdateInput)),
	}
}

// Indexes of the Alert.
func (Alert) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("status", "severity"),
		// One open alert per fingerprint, enforced by the database: a concurrent repeat
		// conflicts here and becomes an increment (alerting.Raise).
		index.Fields("fingerprint").Unique().StorageKey("alert_open_fingerprint").
			Annotations(entsql.IndexWhere("status = 'OPEN' AND fingerprint IS NOT NULL AND fingerprint <> ''")),
	}
}

// Annotations of the Alert.
func (Alert) Annotations() []schema.Annotation { return editable("alerts") }
