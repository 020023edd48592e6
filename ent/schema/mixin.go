package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"entgo.io/ent/schema/mixin"
)

// TimeMixin gives an entity its creation and last-update timestamps. Both are set by the
// database layer, never by API input, and both can order a connection.
type TimeMixin struct {
	mixin.Schema
}

// Fields of the TimeMixin.
func (TimeMixin) Fields() []ent.Field {
	return []ent.Field{
		field.Time("created_at").
			Default(time.Now).
			Immutable().
			Annotations(entgql.OrderField("CREATED_AT"), entgql.Skip(entgql.SkipMutationCreateInput|entgql.SkipMutationUpdateInput)),
		field.Time("updated_at").
			Default(time.Now).
			UpdateDefault(time.Now).
			Annotations(entgql.OrderField("UPDATED_AT"), entgql.Skip(entgql.SkipMutationCreateInput|entgql.SkipMutationUpdateInput)),
	}
}

// Indexes of the TimeMixin: lists are often ordered by creation time.
func (TimeMixin) Indexes() []ent.Index {
	return []ent.Index{index.Fields("created_at")}
}
