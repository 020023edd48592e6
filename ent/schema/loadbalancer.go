package schema

import (
	"fmt"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/virtflow/virtflow/ent/schema/fieldtype"
)

// LoadBalancer fronts one region service with a VIP.
type LoadBalancer struct {
	ent.Schema
}

// Mixin of the LoadBalancer.
func (LoadBalancer) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the LoadBalancer.
func (LoadBalancer) Fields() []ent.Field {
	system := entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)
	return []ent.Field{
		slugField(),
		field.Enum("algorithm").NamedValues(enumValues("RoundRobin", "LeastConnections", "SourceHash")...).Default("ROUND_ROBIN"),
		field.Enum("status").NamedValues(enumValues("Initializing", "NotRealized", "Active", "Deleting", "Error")...).
			Default("INITIALIZING").Annotations(entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)).
			Comment("NOT_REALIZED: recorded with its VIP, but no node forwards traffic for it yet"),
		field.String("status_reason").Optional().MaxLen(1024).
			Annotations(entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)),
		field.JSON("listeners", []fieldtype.LBListener{}).Optional().
			Comment("the ports the VIP accepts (TCP: L4, HTTP: L7) and the members' ports they forward to"),
		field.Int("health_check_interval_ms").Default(1000).Range(100, 60000).
			Comment("how often the load-balancer nodes check each member; a failed member leaves the pool within it"),
		field.JSON("members", []fieldtype.LBMember{}).Optional().Annotations(system).
			Comment("the region service's replicas with the health the load-balancer nodes observe"),
		field.JSON("node_states", []fieldtype.LBNode{}).Optional().Annotations(system).
			Comment("per serving node: VIP announced over BGP, proxy forwarding, as its agent last reported"),
	}
}

// validateListeners rejects listeners without a valid port, protocol or target port and two
// listeners on one port.
func validateListeners(ls []fieldtype.LBListener) error {
	seen := map[int]bool{}
	for i, l := range ls {
		if l.Port < 1 || l.Port > 65535 {
			return fmt.Errorf("listeners[%d].port %d is not a port (1-65535)", i, l.Port)
		}
		if l.TargetPort < 1 || l.TargetPort > 65535 {
			return fmt.Errorf("listeners[%d].targetPort %d is not a port (1-65535)", i, l.TargetPort)
		}
		if l.Protocol != fieldtype.ListenerTCP && l.Protocol != fieldtype.ListenerHTTP {
			return fmt.Errorf("listeners[%d].protocol %q is not TCP or HTTP", i, l.Protocol)
		}
		if seen[l.Port] {
			return fmt.Errorf("listeners[%d]: port %d is already a listener", i, l.Port)
		}
		seen[l.Port] = true
	}
	return nil
}

// Edges of the LoadBalancer.
func (LoadBalancer) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("tenant", Tenant.Type).Ref("load_balancers").Unique().Required(),
		edge.From("region_service", RegionService.Type).Ref("load_balancer").Unique(),
		edge.To("vip", IPAddress.Type).Unique(),
		edge.To("nodes", ComputeNode.Type).Annotations(entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)).
			Comment("the nodes that serve the VIP, chosen by the scheduler across failure domains"),
	}
}

// Indexes of the LoadBalancer.
func (LoadBalancer) Indexes() []ent.Index {
	return []ent.Index{index.Fields("name").Edges("tenant").Unique()}
}

// Hooks of the LoadBalancer.
func (LoadBalancer) Hooks() []ent.Hook {
	return []ent.Hook{validateField("listeners", "listeners", validateListeners)}
}

// Annotations of the LoadBalancer.
func (LoadBalancer) Annotations() []schema.Annotation { return editable("loadBalancers") }
