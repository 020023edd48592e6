package schema

import (
	"net/netip"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"

	"github.com/virtflow/virtflow/domain/ipam"
)

// Network is an IP prefix (IPv4 now, IPv6 accepted) with its VLAN, gateway and purpose. The
// prefix must be canonical (no host bits), the gateway inside it, and it must not overlap another
// network's prefix in the same routing scope, vrf (checked by a hook in package ipam).
type Network struct {
	ent.Schema
}

// Mixin of the Network.
func (Network) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the Network.
func (Network) Fields() []ent.Field {
	return []ent.Field{
		uniqueSlugField(),
		descriptionField(),
		field.String("cidr").NotEmpty().Validate(validPrefix).Annotations(entgql.OrderField("CIDR")).
			Comment("prefix in CIDR notation, e.g. 10.1.0.0/24"),
		field.String("vrf").Default(ipam.DefaultVRF).NotEmpty().MaxLen(64).Annotations(entgql.OrderField("VRF")).
			Comment("routing scope (VRF) of the prefix: prefixes of one scope never overlap; the same prefix may exist in two scopes"),
		field.Int("vlan").Optional().Range(1, 4094).Annotations(entgql.OrderField("VLAN")),
		field.String("gateway").Optional().Validate(validAddr),
		field.Enum("purpose").NamedValues(enumValues("Management", "Service", "Vm", "Storage")...).
			Default("VM").Annotations(entgql.OrderField("PURPOSE")),
		field.Strings("dns_servers").Optional().
			Comment("name servers a VM on the network is told to use (its config drive's network-config)"),
	}
}

// Edges of the Network.
func (Network) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("datacenter", Datacenter.Type).Ref("networks").Unique(),
		edge.From("network_zone", NetworkZone.Type).Ref("networks").Unique(),
		edge.From("tenant", Tenant.Type).Ref("networks").Unique().Comment("set for a tenant's own network"),
		edge.To("ports", Port.Type).Annotations(entgql.RelayConnection()),
		edge.To("ip_addresses", IPAddress.Type).Annotations(entgql.RelayConnection()),
		edge.To("ip_ranges", IPRange.Type).Annotations(entgql.RelayConnection()),
		edge.From("virtual_machines", VirtualMachine.Type).Ref("networks").Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("the VMs created on the network (their NICs are its ports)"),
		edge.From("region_services", RegionService.Type).Ref("networks").Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("the region services whose replicas are created on the network"),
	}
}

// Annotations of the Network.
func (Network) Annotations() []schema.Annotation { return editable("networks") }

// validPrefix accepts a canonical CIDR prefix such as 10.1.0.0/24.
func validPrefix(s string) error {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return errInvalidPrefix
	}
	if p.Masked() != p {
		return errPrefixHostBits
	}
	return nil
}

// validAddr accepts one IPv4 or IPv6 address without a prefix length.
func validAddr(s string) error {
	if _, err := netip.ParseAddr(s); err != nil {
		return errInvalidAddr
	}
	return nil
}

// Hooks of the Network.
func (Network) Hooks() []ent.Hook {
	return []ent.Hook{
		ipam.NetworkHook(),
	}
}
