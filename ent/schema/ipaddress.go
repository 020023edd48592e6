package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/virtflow/virtflow/domain/ipam"
)

// IPAddress is one address of a network, optionally bound to a port or serving as a load
// balancer's VIP. RESERVED marks a single address kept out of allocation; releasing an address
// deletes its row, which frees it for the next allocation. An address appears at most once per network (a unique index enforced by the
// database), so allocation can never hand it out twice.
type IPAddress struct {
	ent.Schema
}

// Mixin of the IPAddress.
func (IPAddress) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the IPAddress.
func (IPAddress) Fields() []ent.Field {
	return []ent.Field{
		field.String("address").NotEmpty().Validate(validAddr).Annotations(entgql.OrderField("ADDRESS")),
		field.Enum("status").NamedValues(enumValues("Reserved", "Allocated")...).
			Default("ALLOCATED").Annotations(entgql.OrderField("STATUS")),
		field.String("dns_name").Optional().MaxLen(253),
		descriptionField(),
	}
}

// Edges of the IPAddress.
func (IPAddress) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("network", Network.Type).Ref("ip_addresses").Unique().Required(),
		edge.From("port", Port.Type).Ref("ip_addresses").Unique(),
		edge.From("load_balancer", LoadBalancer.Type).Ref("vip").Unique(),
	}
}

// Indexes of the IPAddress.
func (IPAddress) Indexes() []ent.Index {
	return []ent.Index{index.Fields("address").Edges("network").Unique(), index.Edges("network")}
}

// Annotations of the IPAddress.
func (IPAddress) Annotations() []schema.Annotation { return editable("ipAddresses") }

// Hooks of the IPAddress.
func (IPAddress) Hooks() []ent.Hook {
	return []ent.Hook{
		ipam.AddressHook(),
		ipam.BoundHook(),
	}
}
