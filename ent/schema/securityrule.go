package schema

import (
	"context"
	"fmt"
	"net/netip"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"

	"github.com/virtflow/virtflow/domain/apierr"
)

// SecurityRule is one ACL rule of a VM (issue 27, seed 001 "ACL"): its node's agent applies
// the VM's rules with nftables inside the namespace of each of the VM's addresses (package
// vmnet). A rule matches traffic to the VM (INGRESS) or from it (EGRESS) by protocol,
// destination port range (TCP/UDP) and the peer's CIDR, and ALLOWs or DENYs it; rules are
// tried in ascending priority and the first that matches decides. A direction without any
// rule lets everything through; once a VM has a rule of a direction, traffic of that
// direction no rule allows is dropped (replies of allowed connections always pass).
// A rule belongs to the VM's tenant.
type SecurityRule struct {
	ent.Schema
}

// Mixin of the SecurityRule.
func (SecurityRule) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the SecurityRule.
func (SecurityRule) Fields() []ent.Field {
	return []ent.Field{
		descriptionField(),
		field.Enum("direction").NamedValues(enumValues("Ingress", "Egress")...).
			Comment("INGRESS: traffic to the VM; EGRESS: traffic from it"),
		field.Enum("protocol").NamedValues(enumValues("Any", "Tcp", "Udp", "Icmp")...).Default("ANY"),
		field.Int("port_from").Optional().Nillable().Range(1, 65535).
			Comment("first port of the VM's (INGRESS) or the peer's (EGRESS) port range; TCP and UDP only"),
		field.Int("port_to").Optional().Nillable().Range(1, 65535).
			Comment("last port of the range (default: portFrom)"),
		field.String("cidr").Default("0.0.0.0/0").Validate(validCIDR).
			Comment("the peer's addresses: the source of INGRESS traffic, the destination of EGRESS traffic"),
		field.Enum("action").NamedValues(enumValues("Allow", "Deny")...).Default("ALLOW"),
		field.Int("priority").Default(100).Range(0, 65535).Annotations(entgql.OrderField("PRIORITY")).
			Comment("rules are tried in ascending priority; the first that matches decides"),
	}
}

// Edges of the SecurityRule.
func (SecurityRule) Edges() []ent.Edge {
	fixed := entgql.Skip(entgql.SkipMutationUpdateInput)
	return []ent.Edge{
		edge.From("tenant", Tenant.Type).Ref("security_rules").Unique().Required().Annotations(fixed),
		edge.From("virtual_machine", VirtualMachine.Type).Ref("security_rules").Unique().Required().Annotations(fixed).
			Comment("the VM the rule applies to"),
	}
}

// Annotations of the SecurityRule.
func (SecurityRule) Annotations() []schema.Annotation { return editable("securityRules") }

// Hooks of the SecurityRule.
func (SecurityRule) Hooks() []ent.Hook { return []ent.Hook{securityRuleCheck()} }

func validCIDR(s string) error {
	p, err := netip.ParsePrefix(s)
	if err != nil || !p.Addr().Is4() || p.Masked() != p {
		return errInvalidPrefix
	}
	return nil
}

// securityRuleCheck checks what a single field cannot: ports only with TCP or UDP, and a
// range that does not end before it starts. An update is checked with the record's values
// it leaves unchanged.
func securityRuleCheck() ent.Hook {
	return func(next ent.Mutator) ent.Mutator {
		return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
			if !m.Op().Is(ent.OpCreate | ent.OpUpdateOne) {
				return next.Mutate(ctx, m)
			}
			value := func(name string) (ent.Value, bool) {
				if v, ok := m.Field(name); ok {
					return v, true
				}
				if m.FieldCleared(name) || !m.Op().Is(ent.OpUpdateOne) {
					return nil, false
				}
				v, err := m.OldField(ctx, name)
				return v, err == nil && v != nil
			}
			port := func(name string) *int {
				v, ok := value(name)
				if !ok {
					return nil
				}
				switch p := v.(type) {
				case int:
					return &p
				case *int:
					return p
				}
				return nil
			}
			proto := "ANY"
			if v, ok := value("protocol"); ok {
				proto = fmt.Sprint(v)
			}
			from, to := port("port_from"), port("port_to")
			switch {
			case (from != nil || to != nil) && proto != "TCP" && proto != "UDP":
				return nil, apierr.Validation("portFrom", "ports need protocol TCP or UDP")
			case to != nil && from == nil:
				return nil, apierr.Validation("portFrom", "portTo needs portFrom")
			case from != nil && to != nil && *to < *from:
				return nil, apierr.Validation("portTo", "portTo %d is below portFrom %d", *to, *from)
			}
			return next.Mutate(ctx, m)
		})
	}
}
