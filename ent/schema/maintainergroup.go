package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
)

// MaintainerGroup is a team of maintainers with an admin maintainer; resources can name a group
// as responsible instead of (or besides) individuals.
type MaintainerGroup struct {
	ent.Schema
}

// Mixin of the MaintainerGroup.
func (MaintainerGroup) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the MaintainerGroup.
func (MaintainerGroup) Fields() []ent.Field {
	return []ent.Field{
		uniqueSlugField(),
		descriptionField(),
		field.Enum("status").NamedValues(enumValues("Active", "Inactive")...).Default("ACTIVE"),
		field.String("webhook_url").Optional().MaxLen(2048).Validate(validHTTPURL).
			Comment("alerts on the resources the group is responsible for are POSTed here (package alerting)"),
		field.String("webhook_secret").Optional().Sensitive().MaxLen(512).
			Annotations(entgql.Skip(entgql.SkipType | entgql.SkipWhereInput | entgql.SkipOrderField)).
			Comment("HMAC-SHA256 key of the group's hook bodies (X-VirtFlow-Signature); write-only; stored sealed (internal/secrets), at most 256 bytes in clear"),
	}
}

// Edges of the MaintainerGroup.
func (MaintainerGroup) Edges() []ent.Edge {
	return append([]ent.Edge{
		edge.From("admin", Maintainer.Type).Ref("administered_groups").Unique(),
		edge.To("members", Maintainer.Type).Annotations(entgql.RelayConnection()),
		edge.To("deliveries", HookDelivery.Type).Annotations(entgql.RelayConnection(),
			entgql.Skip(entgql.SkipMutationCreateInput|entgql.SkipMutationUpdateInput)),
	}, responsibilities()...)
}

// Annotations of the MaintainerGroup.
func (MaintainerGroup) Annotations() []schema.Annotation { return editable("maintainerGroups") }
