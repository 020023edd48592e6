package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
)

// Notice is an announcement to all users, to one tenant or to one user; its audience must
// match the edge it sets (checked by a hook in package operations).
type Notice struct {
	ent.Schema
}

// Mixin of the Notice.
func (Notice) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the Notice.
func (Notice) Fields() []ent.Field {
	return []ent.Field{
		field.String("title").NotEmpty().MaxLen(256).Annotations(entgql.OrderField("TITLE")),
		field.Text("body").Optional().MaxLen(65536),
		field.Enum("severity").NamedValues(enumValues("Info", "Important", "Fault")...).Default("INFO"),
		field.Enum("audience").NamedValues(enumValues("All", "Tenant", "User")...).Default("ALL"),
		field.Time("published_at").Default(time.Now).Annotations(entgql.OrderField("PUBLISHED_AT")),
		field.Time("expires_at").Optional().Nillable(),
	}
}

// Edges of the Notice.
func (Notice) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("tenant", Tenant.Type).Ref("notices").Unique(),
		edge.From("user", User.Type).Ref("notices").Unique(),
	}
}

// Annotations of the Notice.
func (Notice) Annotations() []schema.Annotation { return editable("notices") }

// Hooks of the Notice.
func (Notice) Hooks() []ent.Hook {
	return []ent.Hook{
		timeOrder("published_at", "expires_at", "expiresAt"),
		audienceMatches(),
	}
}
