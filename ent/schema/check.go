package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"

	"github.com/virtflow/virtflow/ent/schema/fieldtype"
)

// Check is something node agents run periodically, in the Nagios/Sensu plugin convention: a
// command whose exit code is the status (0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN) and whose
// first output line is the message — or one of the built-in checks. It applies to the nodes
// and clusters it names and to the nodes whose labels match its selector; the agents report
// the results as events (reportEvents). Several checks may name one node or cluster (the
// edges are many-to-many); a check's name stays unique, so the same check twice is refused.
type Check struct {
	ent.Schema
}

// Mixin of the Check.
func (Check) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the Check.
func (Check) Fields() []ent.Field {
	return []ent.Field{
		uniqueSlugField(),
		descriptionField(),
		field.Enum("builtin").NamedValues(enumValues("LibvirtdReachable", "StoragePoolFree", "DomainStateDrift", "NicLink")...).
			Optional().Nillable().Comment("a check built into the agent; command is then ignored"),
		field.String("command").Optional().MaxLen(4096).Comment("run by the agent without a shell, split on spaces"),
		field.Int("interval_seconds").Default(60).Range(5, 86400),
		field.Int("timeout_seconds").Default(10).Range(1, 3600),
		field.Int("occurrences").Default(1).Range(1, 10000).
			Comment("consecutive failures before the agent reports a non-OK status"),
		field.Int("reissue_duration_seconds").Default(3600).NonNegative(),
		field.JSON("label_selector", fieldtype.Labels{}).Optional().
			Comment("also applies to every node carrying all these labels"),
		field.Bool("enabled").Default(true),
	}
}

// Edges of the Check.
func (Check) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("nodes", ComputeNode.Type).Annotations(entgql.RelayConnection()),
		edge.To("clusters", Cluster.Type).Annotations(entgql.RelayConnection()),
		edge.To("events", Event.Type).Annotations(entgql.RelayConnection(),
			entgql.Skip(entgql.SkipMutationCreateInput|entgql.SkipMutationUpdateInput)),
	}
}

// Annotations of the Check.
func (Check) Annotations() []schema.Annotation { return editable("checks") }

// Hooks of the Check.
func (Check) Hooks() []ent.Hook {
	return []ent.Hook{validateField("label_selector", "labelSelector", fieldtype.Labels.Validate)}
}
