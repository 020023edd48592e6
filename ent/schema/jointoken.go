package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
)

// JoinToken is a one-time, expiring secret with which a node agent registers its node
// (registerNode) and receives its own AGENT credential, like kubeadm's bootstrap tokens. It
// either names an existing compute node to bind, or a cluster in which the registering host
// becomes a new node. Shown once when created, stored only as a hash, consumed by the first
// registration.
type JoinToken struct {
	ent.Schema
}

// Mixin of the JoinToken.
func (JoinToken) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the JoinToken.
func (JoinToken) Fields() []ent.Field {
	return []ent.Field{
		field.String("token_hash").Unique().Sensitive().NotEmpty().Annotations(entgql.Skip(entgql.SkipAll)),
		field.String("prefix").NotEmpty().MaxLen(16).Comment("first characters of the token, to recognise it"),
		field.String("node_name").Optional().MaxLen(128).
			Comment("name of the compute node a cluster join token creates; empty: the registering host's name"),
		field.Time("expires_at").Annotations(entgql.OrderField("EXPIRES_AT")),
		field.Time("used_at").Optional().Nillable().Comment("when a node registered with it; a used token is spent"),
	}
}

// Edges of the JoinToken.
func (JoinToken) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("cluster", Cluster.Type).Unique().Comment("the cluster a new node joins"),
		edge.To("node", ComputeNode.Type).Unique().
			Comment("the node to bind, or once used the node that registered"),
	}
}

// Annotations of the JoinToken.
func (JoinToken) Annotations() []schema.Annotation { return readOnly("joinTokens") }
