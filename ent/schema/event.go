package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/virtflow/virtflow/ent/schema/fieldtype"
)

// Event is the result of a check run by a node agent or a plugin. A repeat of the same check
// and status only bumps occurrences and last_seen_at until its reissue duration passes. Events
// are reported by agents, not edited by operators.
type Event struct {
	ent.Schema
}

// Mixin of the Event.
func (Event) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the Event.
func (Event) Fields() []ent.Field {
	return []ent.Field{
		field.String("check_name").NotEmpty().MaxLen(128).Annotations(entgql.OrderField("CHECK_NAME")),
		field.Enum("status").NamedValues(enumValues("Success", "Warning", "Critical")...).Annotations(entgql.OrderField("STATUS")),
		field.Text("output").Optional().MaxLen(65536),
		field.String("source").Optional().MaxLen(128).Comment("agent or plugin that produced it"),
		field.Int("occurrences").Default(1).Positive(),
		field.Int("reissue_duration_seconds").Default(3600).NonNegative(),
		field.Bool("silenced").Default(false),
		field.Time("first_seen_at").Default(time.Now),
		field.Time("last_seen_at").Default(time.Now).Annotations(entgql.OrderField("LAST_SEEN_AT")),
		field.JSON("labels", fieldtype.Labels{}).Optional().Comment("labels the reporter attached (matched by rules)"),
		field.Time("processed_at").Optional().Nillable().
			Annotations(entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)).
			Comment("set once the rules ran on it (package alerting)"),
		field.String("outcome").Optional().MaxLen(1024).
			Annotations(entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)).
			Comment("what the rules did with it, e.g. silenced by rule x, alert 12 raised"),
	}
}

// Edges of the Event.
func (Event) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("node", ComputeNode.Type).Ref("events").Unique(),
		edge.From("host", Host.Type).Ref("events").Unique(),
		edge.From("alert", Alert.Type).Ref("events").Unique(),
		edge.From("check", Check.Type).Ref("events").Unique(),
		edge.From("cluster", Cluster.Type).Ref("events").Unique().
			Comment("a whole cluster's event, e.g. cluster-heartbeat from the cross-cluster watch"),
	}
}

// Indexes of the Event.
func (Event) Indexes() []ent.Index {
	return []ent.Index{index.Fields("check_name", "status"), index.Fields("last_seen_at")}
}

// Annotations of the Event.
func (Event) Annotations() []schema.Annotation { return readOnly("events") }
