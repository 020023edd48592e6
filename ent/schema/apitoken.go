package schema

import (
	"net/netip"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
)

// APIToken is a credential for automation: shown once when created, stored only as a hash,
// scoped (read-only or read-write, optionally to one tenant), expiring, revocable and
// optionally restricted to source networks. Only its metadata is visible through the API.
type APIToken struct {
	ent.Schema
}

// Mixin of the APIToken.
func (APIToken) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the APIToken.
func (APIToken) Fields() []ent.Field {
	return []ent.Field{
		nameField(),
		field.String("token_hash").Unique().Sensitive().NotEmpty().Annotations(entgql.Skip(entgql.SkipAll)),
		field.String("prefix").NotEmpty().MaxLen(16).Comment("first characters of the token, to recognise it"),
		field.Enum("scope").NamedValues(enumValues("ReadOnly", "ReadWrite")...).Default("READ_ONLY"),
		field.Enum("kind").NamedValues(enumValues("Api", "Session", "Agent")...).Default("API").Immutable().
			Comment("API tokens are made by createAPIToken, sessions by login, agent tokens for node agents"),
		field.Strings("allowed_cidrs").Optional().Validate(validPrefixes),
		field.Time("expires_at").Optional().Nillable().Annotations(entgql.OrderField("EXPIRES_AT")),
		field.Time("last_used_at").Optional().Nillable(),
		field.Time("revoked_at").Optional().Nillable(),
	}
}

// Edges of the APIToken.
func (APIToken) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("owner", User.Type).Ref("api_tokens").Unique().Required(),
		edge.From("tenant", Tenant.Type).Ref("api_tokens").Unique(),
	}
}

// Annotations of the APIToken.
func (APIToken) Annotations() []schema.Annotation { return readOnly("apiTokens") }

func validPrefixes(ps []string) error {
	for _, p := range ps {
		if _, err := netip.ParsePrefix(p); err != nil {
			return errInvalidPrefix
		}
	}
	return nil
}
