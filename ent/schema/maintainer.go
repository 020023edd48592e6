package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
)

// Maintainer is a person responsible for resources (hosts, racks, nodes, clusters, VMs,
// Kubernetes clusters), optionally linked to the User they log in as.
type Maintainer struct {
	ent.Schema
}

// Mixin of the Maintainer.
func (Maintainer) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the Maintainer.
func (Maintainer) Fields() []ent.Field {
	return []ent.Field{
		nameField(),
		field.String("account").Unique().Match(usernamePattern).Annotations(entgql.OrderField("ACCOUNT")),
		field.String("email").Optional().MaxLen(254).Validate(validEmail),
		field.Enum("status").NamedValues(enumValues("Active", "Inactive")...).Default("ACTIVE"),
	}
}

// Edges of the Maintainer.
func (Maintainer) Edges() []ent.Edge {
	return append([]ent.Edge{
		edge.From("user", User.Type).Ref("maintainer").Unique(),
		edge.From("groups", MaintainerGroup.Type).Ref("members").Annotations(entgql.RelayConnection()),
		edge.To("administered_groups", MaintainerGroup.Type).Annotations(entgql.RelayConnection()),
		edge.To("maintenances", Maintenance.Type).Annotations(entgql.RelayConnection()),
	}, responsibilities()...)
}

// Annotations of the Maintainer.
func (Maintainer) Annotations() []schema.Annotation { return editable("maintainers") }

// responsibilities are the owner sides of the responsibility edges shared by Maintainer and
// MaintainerGroup; maintainedBy declares their inverses on each resource.
func responsibilities() []ent.Edge {
	return []ent.Edge{
		edge.To("hosts", Host.Type).Annotations(entgql.RelayConnection()),
		edge.To("racks", Rack.Type).Annotations(entgql.RelayConnection()),
		edge.To("nodes", ComputeNode.Type).Annotations(entgql.RelayConnection()),
		edge.To("clusters", Cluster.Type).Annotations(entgql.RelayConnection()),
		edge.To("virtual_machines", VirtualMachine.Type).Annotations(entgql.RelayConnection()),
		edge.To("kubernetes_clusters", KubernetesCluster.Type).Annotations(entgql.RelayConnection()),
	}
}
