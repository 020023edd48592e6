package schema

import (
	"net/mail"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
)

// Datacenter is a site in a region. Seed 004's location path is region → plant (building) →
// phase → datacenter → room → rack: a Datacenter carries its building and phase, and its Floors
// are the machine rooms.
type Datacenter struct {
	ent.Schema
}

// Mixin of the Datacenter.
func (Datacenter) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the Datacenter.
func (Datacenter) Fields() []ent.Field {
	return []ent.Field{
		uniqueSlugField(),
		descriptionField(),
		field.String("building").Optional().MaxLen(128),
		field.String("phase").Optional().MaxLen(64),
		field.String("address").Optional().MaxLen(512),
		field.String("postcode").Optional().MaxLen(32),
		field.String("phone").Optional().MaxLen(64),
		field.String("mail").Optional().MaxLen(254).Validate(validEmail),
	}
}

// Edges of the Datacenter.
func (Datacenter) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("region", Region.Type).Ref("datacenters").Unique().Required(),
		edge.To("floors", Floor.Type).Annotations(entgql.RelayConnection()),
		edge.To("clusters", Cluster.Type).Annotations(entgql.RelayConnection()),
		edge.To("power_zones", PowerZone.Type).Annotations(entgql.RelayConnection()),
		edge.To("network_zones", NetworkZone.Type).Annotations(entgql.RelayConnection()),
		edge.To("rack_zones", RackZone.Type).Annotations(entgql.RelayConnection()),
		edge.To("networks", Network.Type).Annotations(entgql.RelayConnection()),
	}
}

// Annotations of the Datacenter.
func (Datacenter) Annotations() []schema.Annotation { return editable("datacenters") }

// validEmail accepts a bare address such as ops@example.com.
func validEmail(s string) error {
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s {
		return errInvalidEmail
	}
	return nil
}
