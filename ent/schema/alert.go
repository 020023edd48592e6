package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
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
	}
}

// Edges of the Alert.
func (Alert) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("node", ComputeNode.Type).Ref("alerts").Unique(),
		edge.From("host", Host.Type).Ref("alerts").Unique(),
		edge.To("events", Event.Type).Annotations(entgql.RelayConnection()),
	}
}

// Indexes of the Alert.
func (Alert) Indexes() []ent.Index {
	return []ent.Index{index.Fields("status", "severity"), index.Fields("fingerprint")}
}

// Annotations of the Alert.
func (Alert) Annotations() []schema.Annotation { return editable("alerts") }
