package schema

import (
	"net"
	"strings"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Port is a network interface of a host or of a virtual machine (a VM NIC): physical, a bond
// of member ports, or virtual. It belongs to at most one network, carries IP addresses, and is
// cabled to at most one other port through a Link (as its A or its B end).
type Port struct {
	ent.Schema
}

// Mixin of the Port.
func (Port) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the Port.
func (Port) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").NotEmpty().MaxLen(64).Annotations(entgql.OrderField("NAME")),
		descriptionField(),
		field.String("mac").Optional().Unique().Validate(validMAC).
			Comment("MAC address, lower-case colon form"),
		field.Int("speed_mbps").Optional().NonNegative().Annotations(entgql.OrderField("SPEED")),
		field.Int("vlan").Optional().Range(1, 4094),
		field.Int("mtu").Default(1500).Range(576, 9216),
		field.Enum("kind").NamedValues(enumValues("Physical", "Bond", "Virtual")...).Default("PHYSICAL"),
		field.String("driver").Optional().MaxLen(32).Comment("NIC model of a VM port, e.g. virtio"),
	}
}

// Edges of the Port.
func (Port) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("host", Host.Type).Ref("ports").Unique(),
		edge.From("virtual_machine", VirtualMachine.Type).Ref("ports").Unique(),
		edge.From("network", Network.Type).Ref("ports").Unique(),
		edge.To("ip_addresses", IPAddress.Type).Annotations(entgql.RelayConnection()),
		edge.To("link_a", Link.Type).Unique().Comment("the cable whose A end is this port"),
		edge.To("link_b", Link.Type).Unique().Comment("the cable whose B end is this port"),
		edge.To("members", Port.Type).Annotations(entgql.RelayConnection()).From("bond").Unique(),
	}
}

// Indexes of the Port: names are unique on a host and on a VM.
func (Port) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("name").Edges("host").Unique(),
		index.Fields("name").Edges("virtual_machine").Unique(),
	}
}

// Annotations of the Port.
func (Port) Annotations() []schema.Annotation { return editable("ports") }

// validMAC accepts a 48-bit MAC in lower-case colon notation (aa:bb:cc:dd:ee:ff).
func validMAC(s string) error {
	hw, err := net.ParseMAC(s)
	if err != nil || len(hw) != 6 || hw.String() != strings.ToLower(s) || s != strings.ToLower(s) {
		return errInvalidMAC
	}
	return nil
}
