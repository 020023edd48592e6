package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
)

// Provider is a kind of resource a node can realize and the driver that realizes it (seed 001:
// VirtualMachine on libvirt, Pod on docker, ...). A node supports several providers.
type Provider struct {
	ent.Schema
}

// Mixin of the Provider.
func (Provider) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the Provider.
func (Provider) Fields() []ent.Field {
	return []ent.Field{
		uniqueSlugField(),
		descriptionField(),
		field.Enum("kind").NamedValues(enumValues("VirtualMachine", "Pod", "VirtualMachineDeployment", "PodDeployment",
			"ConfigMap", "Secret", "LoadBalancer", "CI", "CD")...).Annotations(entgql.OrderField("KIND")),
		field.Enum("driver").NamedValues(enumValues("Libvirt", "Docker", "Vpp", "Xdp", "Etcd")...),
		field.Bool("supports_live_migration").Default(false),
	}
}

// Edges of the Provider.
func (Provider) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("nodes", ComputeNode.Type).Ref("providers").Annotations(entgql.RelayConnection()),
		edge.To("flavors", Flavor.Type).Annotations(entgql.RelayConnection()),
	}
}

// Annotations of the Provider.
func (Provider) Annotations() []schema.Annotation { return editable("providers") }
