package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// RuleState is what an event rule remembers of one fingerprint (a check on a node, or an
// Aggregate group): the run of consecutive events with the same status (Occurrences), when
// the rule last acted (ReissueDuration) and the group's pending window. Internal: only the
// rule engine (package alerting, as the system) reads and writes it.
type RuleState struct {
	ent.Schema
}

// Mixin of the RuleState.
func (RuleState) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the RuleState.
func (RuleState) Fields() []ent.Field {
	return []ent.Field{
		field.Int("rule_id"),
		field.String("key").NotEmpty().MaxLen(512),
		field.String("last_status").Optional().MaxLen(32),
		field.Int("consecutive").Default(0).NonNegative(),
		field.Time("last_issued_at").Optional().Nillable(),
		field.String("issued_status").Optional().MaxLen(32).Comment("the status the rule last acted on"),
		field.Int("pending").Default(0).NonNegative().Comment("Aggregate: events waiting for the group's flush"),
		field.Int("last_event_id").Default(0).NonNegative(),
	}
}

// Indexes of the RuleState.
func (RuleState) Indexes() []ent.Index {
	return []ent.Index{index.Fields("rule_id", "key").Unique()}
}

// Annotations of the RuleState.
func (RuleState) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll)}
}
