package schema

import (
	"regexp"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
)

// User is a person who logs in to VirtFlow (operators, maintainers, tenant members). The
// password is stored only as a slow hash and never leaves the server.
type User struct {
	ent.Schema
}

var usernamePattern = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._@-]{1,63}$`)

// Mixin of the User.
func (User) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the User.
func (User) Fields() []ent.Field {
	return []ent.Field{
		field.String("username").Unique().Match(usernamePattern).Annotations(entgql.OrderField("USERNAME")),
		field.String("display_name").Optional().MaxLen(128),
		field.String("email").Optional().MaxLen(254).Validate(validEmail).Annotations(entgql.OrderField("EMAIL")),
		field.Enum("status").NamedValues(enumValues("Active", "Disabled")...).Default("ACTIVE"),
		field.String("password_hash").Optional().Sensitive().Annotations(entgql.Skip(entgql.SkipAll)),
		field.Time("last_login_at").Optional().Nillable().
			Annotations(entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)),
	}
}

// Edges of the User.
func (User) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("api_tokens", APIToken.Type).Annotations(entgql.RelayConnection()),
		edge.From("tenants", Tenant.Type).Ref("members").Annotations(entgql.RelayConnection()),
		edge.To("maintainer", Maintainer.Type).Unique(),
		edge.To("notices", Notice.Type).Annotations(entgql.RelayConnection()),
		edge.To("role_bindings", RoleBinding.Type).Annotations(entgql.RelayConnection()),
		edge.To("ssh_keys", SSHKey.Type).Annotations(entgql.RelayConnection()),
	}
}

// Annotations of the User.
func (User) Annotations() []schema.Annotation { return editable("users") }
