package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// KubernetesCluster is a tenant's Kubernetes cluster, realized as control-plane and worker VMs
// placed by the scheduler, with its plugins, service mesh and bastion.
type KubernetesCluster struct {
	ent.Schema
}

// Mixin of the KubernetesCluster.
func (KubernetesCluster) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the KubernetesCluster.
func (KubernetesCluster) Fields() []ent.Field {
	system := entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)
	return []ent.Field{
		slugField(),
		descriptionField(),
		field.String("version").NotEmpty().Match(semverish).Annotations(entgql.OrderField("VERSION")),
		field.Enum("scheduling_mode").NamedValues(enumValues("Spread", "Pack")...).Default("SPREAD"),
		field.Int("control_plane_count").Default(3).Range(1, 7),
		field.Int("worker_count").Default(3).Range(0, 1000),
		field.Strings("plugins").Optional(),
		field.String("bastion").Optional().MaxLen(253).Comment("address of the bastion host"),
		field.Enum("status").NamedValues(enumValues("Initializing", "Creating", "Active", "Updating", "Deleting", "Error")...).
			Default("INITIALIZING").Annotations(entgql.OrderField("STATUS"), system),
		field.String("status_reason").Optional().MaxLen(1024).Annotations(system),
	}
}

// Edges of the KubernetesCluster.
func (KubernetesCluster) Edges() []ent.Edge {
	return append([]ent.Edge{
		edge.From("tenant", Tenant.Type).Ref("kubernetes_clusters").Unique().Required(),
		edge.From("region", Region.Type).Ref("kubernetes_clusters").Unique().Required(),
		edge.From("service_mesh", ServiceMesh.Type).Ref("kubernetes_clusters").Unique(),
		edge.To("virtual_machines", VirtualMachine.Type).Annotations(entgql.RelayConnection()),
	}, maintainedBy("kubernetes_clusters")...)
}

// Indexes of the KubernetesCluster.
func (KubernetesCluster) Indexes() []ent.Index {
	return []ent.Index{index.Fields("name").Edges("tenant").Unique()}
}

// Annotations of the KubernetesCluster.
func (KubernetesCluster) Annotations() []schema.Annotation { return editable("kubernetesClusters") }
