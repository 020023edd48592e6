package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// RoleBinding grants a user a role in a domain: the platform (admin, operator, maintainer,
// viewer), one tenant (tenant admin, tenant member) or one node (agent). Bindings are the
// "g" half of VirtFlow's Casbin RBAC-with-domains model, kept in the database so that a grant
// or revoke takes effect at once on every server replica; what each role may do is the
// policy embedded in package authz.
type RoleBinding struct {
	ent.Schema
}

// Mixin of the RoleBinding.
func (RoleBinding) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the RoleBinding.
func (RoleBinding) Fields() []ent.Field {
	return []ent.Field{
		field.Enum("role").NamedValues(enumValues("Admin", "Operator", "Maintainer", "Viewer",
			"TenantAdmin", "TenantMember", "Agent")...).Immutable().Annotations(entgql.OrderField("ROLE")),
		field.String("domain").Immutable().NotEmpty().
			Comment("platform, tenant:<id> or node:<id>; derived from the role and edges"),
		field.String("granted_by").Optional().Immutable(),
	}
}

// Edges of the RoleBinding.
func (RoleBinding) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("user", User.Type).Ref("role_bindings").Unique().Required().Immutable(),
		edge.From("tenant", Tenant.Type).Ref("role_bindings").Unique().Immutable(),
		edge.From("node", ComputeNode.Type).Ref("role_bindings").Unique().Immutable(),
	}
}

// Indexes of the RoleBinding: a user holds a role in a domain at most once.
func (RoleBinding) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("role", "domain").Edges("user").Unique(),
		// Every authenticated request reads its token owner's bindings by user
		// (identity.Authenticate); the unique index above leads with role and cannot serve it.
		index.Edges("user"),
	}
}

// Annotations of the RoleBinding.
func (RoleBinding) Annotations() []schema.Annotation { return readOnly("roleBindings") }
