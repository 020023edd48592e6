package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/virtflow/virtflow/ent/schema/fieldtype"
)

// RegionService is a group of identical VMs in one region placed by one schedule policy,
// optionally behind a load balancer and part of a global service. Raising replicas adds VMs,
// lowering removes from the end (SPEC.md §2, §5).
type RegionService struct {
	ent.Schema
}

// Mixin of the RegionService.
func (RegionService) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the RegionService.
func (RegionService) Fields() []ent.Field {
	system := entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)
	return []ent.Field{
		slugField(),
		descriptionField(),
		field.Int("replicas").Default(1).Range(0, 10000).Annotations(entgql.Skip(entgql.SkipMutationUpdateInput)).
			Comment("changed through scaleRegionService"),
		field.JSON("schedule_policy", fieldtype.SchedulePolicy{}).Optional(),
		field.Bool("allow_partial").Default(false).Comment("place as many replicas as fit instead of none"),
		field.Bool("load_balanced").Default(false).Annotations(entgql.Skip(entgql.SkipMutationUpdateInput)).
			Comment("create a load balancer with a VIP with the service (deleted with it)"),
		field.Enum("status").NamedValues(enumValues("Initializing", "Creating", "Active", "Updating", "Deleting", "Deleted", "Error")...).
			Default("INITIALIZING").Annotations(entgql.OrderField("STATUS"), system),
		field.String("status_reason").Optional().MaxLen(1024).Annotations(system),
		field.Time("status_changed_at").Default(time.Now).Annotations(entgql.OrderField("STATUS_CHANGED_AT"), system).
			Comment("when status last changed; the reconcile loop retries or fails what stays in a transitional state too long"),
	}
}

// Edges of the RegionService.
func (RegionService) Edges() []ent.Edge {
	// Replicas already placed would escape quota and capacity checks if these changed.
	fixed := entgql.Skip(entgql.SkipMutationUpdateInput)
	return []ent.Edge{
		edge.From("tenant", Tenant.Type).Ref("region_services").Unique().Required().Annotations(fixed),
		edge.From("region", Region.Type).Ref("region_services").Unique().Required().Annotations(fixed),
		edge.From("flavor", Flavor.Type).Ref("region_services").Unique().Annotations(fixed),
		edge.From("image", Image.Type).Ref("region_services").Unique(),
		edge.From("global_service", GlobalService.Type).Ref("region_services").Unique(),
		edge.To("load_balancer", LoadBalancer.Type).Unique(),
		edge.To("networks", Network.Type).Annotations(fixed).
			Comment("the networks every replica is created on; empty means the tenant's default VM network"),
		edge.To("virtual_machines", VirtualMachine.Type).Annotations(entgql.RelayConnection(),
			entgql.Skip(entgql.SkipMutationCreateInput|entgql.SkipMutationUpdateInput)).
			Comment("the replicas, created and removed by placement only"),
	}
}

// Indexes of the RegionService.
func (RegionService) Indexes() []ent.Index {
	return []ent.Index{index.Fields("name").Edges("tenant").Unique()}
}

// Annotations of the RegionService.
func (RegionService) Annotations() []schema.Annotation { return editable("regionServices") }

// Hooks of the RegionService.
func (RegionService) Hooks() []ent.Hook {
	return []ent.Hook{
		validatePolicy(),
	}
}
