package schema

import (
	"context"
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
)

// MaxSilence is the longest an explicit silence may last.
const MaxSilence = 30 * 24 * time.Hour

// Silence mutes matching events between its start and end: they are stored and flagged
// silenced, and no rule acts on them. Maintenance, cordons and drains silence their hosts
// and nodes without a row (package alerting).
type Silence struct {
	ent.Schema
}

// Mixin of the Silence.
func (Silence) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the Silence.
func (Silence) Fields() []ent.Field {
	return []ent.Field{
		field.String("check_name_pattern").Default("*").MaxLen(256),
		field.String("node_pattern").Default("*").MaxLen(256),
		field.String("host_pattern").Default("*").MaxLen(256),
		field.JSON("label_matchers", fieldtype.Labels{}).Optional(),
		field.Time("starts_at").Default(time.Now).Annotations(entgql.OrderField("STARTS_AT")),
		field.Time("ends_at").Annotations(entgql.OrderField("ENDS_AT")),
		field.String("created_by").Optional().MaxLen(128).
			Annotations(entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)),
		field.Text("comment").NotEmpty().MaxLen(4096),
	}
}

// Indexes of the Silence.
func (Silence) Indexes() []ent.Index { return []ent.Index{index.Fields("ends_at")} }

// Annotations of the Silence.
func (Silence) Annotations() []schema.Annotation { return editable("silences") }

// Hooks of the Silence.
func (Silence) Hooks() []ent.Hook {
	return []ent.Hook{
		timeOrder("starts_at", "ends_at", "endsAt"),
		byViewer("created_by"),
		silenceLength(),
	}
}

// silenceLength refuses a silence longer than MaxSilence.
func silenceLength() ent.Hook {
	return func(next ent.Mutator) ent.Mutator {
		return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
			start, okS := m.Field("starts_at")
			end, okE := m.Field("ends_at")
			if m.Op().Is(ent.OpUpdateOne) && (okS || okE) {
				if !okS {
					start, _ = m.OldField(ctx, "starts_at")
				}
				if !okE {
					end, _ = m.OldField(ctx, "ends_at")
				}
			}
			if okE && !okS && m.Op().Is(ent.OpCreate) {
				start, okS = time.Now(), true
			}
			s, sOK := asTime(start)
			e, eOK := asTime(end)
			if sOK && eOK && e.Sub(s) > MaxSilence {
				return nil, apierr.Validation("endsAt", "a silence lasts at most %s", MaxSilence)
			}
			return next.Mutate(ctx, m)
		})
	}
}
