package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"

	"github.com/virtflow/virtflow/ent/schema/fieldtype"

	"github.com/virtflow/virtflow/domain/topology"
)

// Host is a physical device: a server, switch, router, PDU or other gear. It may be mounted in
// a rack at a unit position (1 is the bottom unit) with a height in units, on the front or the
// rear face, full depth or not; its units may not overlap another device of the same rack on
// the same face (checked by a hook in package topology). Network gear carries its fabric role.
type Host struct {
	ent.Schema
}

// Mixin of the Host.
func (Host) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the Host.
func (Host) Fields() []ent.Field {
	return []ent.Field{
		uniqueSlugField(),
		descriptionField(),
		field.String("serial_number").Optional().Unique().MaxLen(128).Annotations(entgql.OrderField("SERIAL_NUMBER")),
		field.String("vendor").Optional().MaxLen(128),
		field.String("model").Optional().MaxLen(128).Annotations(entgql.OrderField("MODEL")),
		field.Enum("kind").NamedValues(enumValues("Server", "Switch", "Router", "Pdu", "Other")...).
			Default("SERVER").Annotations(entgql.OrderField("KIND")),
		field.Enum("role").NamedValues(enumValues("GatewayRouter", "FloorSpine", "FloorLeaf", "RackSpine", "RackLeaf")...).
			Optional().Nillable().Comment("fabric role of network gear (seed 001)"),
		field.Int("position").Optional().Min(1).Annotations(entgql.OrderField("POSITION")).
			Comment("lowest rack unit the device occupies; 1 is the bottom of the rack"),
		field.Int("height").Default(1).Range(1, 60).Comment("height in rack units"),
		field.Enum("face").NamedValues(enumValues("Front", "Rear")...).Default("FRONT"),
		field.Bool("full_depth").Default(true).Comment("a full-depth device blocks both faces of its units"),
		field.Enum("lifecycle").NamedValues(enumValues("Planned", "Staged", "Active", "Maintenance", "Retired")...).
			Default("ACTIVE").Annotations(entgql.OrderField("LIFECYCLE")),
		field.Time("warranty_end").Optional().Annotations(entgql.OrderField("WARRANTY_END")),
		field.String("cpu_model").Optional().MaxLen(128),
		field.Int("cpu_sockets").Default(0).NonNegative(),
		field.Int("cpu_cores").Default(0).NonNegative().Comment("physical cores over all sockets"),
		field.Int("cpu_threads").Default(0).NonNegative().Comment("hardware threads over all sockets"),
		field.Int("numa_nodes").Default(0).NonNegative(),
		field.Int64("memory_mb").Default(0).NonNegative(),
		field.JSON("disks", []fieldtype.Disk{}).Optional(),
		field.JSON("gpus", []fieldtype.GPU{}).Optional(),
		field.JSON("nics", []fieldtype.NIC{}).Optional(),
		field.Int64("bgp_asn").Optional().Nillable().Range(1, 4294967295).
			Comment("BGP autonomous system number: a rack-leaf router's (the nodes cabled to it peer with it) or a server's own (its node agent's speaker)"),
		field.String("bgp_address").Optional().Validate(validAddr).
			Comment("BGP address: a router's session address the nodes peer with, or a server's router id and session address"),
		field.Bool("bfd").Default(false).
			Comment("the router offers BFD on its BGP sessions"),
	}
}

// Edges of the Host.
func (Host) Edges() []ent.Edge {
	return append([]ent.Edge{
		edge.From("rack", Rack.Type).Ref("hosts").Unique(),
		edge.From("power_zone", PowerZone.Type).Ref("hosts").Unique().Comment("overrides the rack's power zone"),
		edge.From("network_zone", NetworkZone.Type).Ref("hosts").Unique().Comment("overrides the rack's network zone"),
		edge.From("rack_zone", RackZone.Type).Ref("hosts").Unique().Comment("overrides the rack's rack zone"),
		edge.From("host_groups", HostGroup.Type).Ref("hosts").Annotations(entgql.RelayConnection()),
		edge.To("ports", Port.Type).Annotations(entgql.RelayConnection()),
		edge.To("node", ComputeNode.Type).Unique(),
		edge.To("events", Event.Type).Annotations(entgql.RelayConnection()),
		edge.To("alerts", Alert.Type).Annotations(entgql.RelayConnection()),
		edge.From("maintenances", Maintenance.Type).Ref("hosts").Annotations(entgql.RelayConnection()),
	}, maintainedBy("hosts")...)
}

// Annotations of the Host.
func (Host) Annotations() []schema.Annotation { return editable("hosts") }

// Hooks of the Host.
func (Host) Hooks() []ent.Hook {
	return []ent.Hook{
		topology.RackPlacementHook(),
		validateField("disks", "disks", fieldtype.ValidateDisks),
		validateField("gpus", "gpus", fieldtype.ValidateGPUs),
		validateField("nics", "nics", fieldtype.ValidateNICs),
	}
}
