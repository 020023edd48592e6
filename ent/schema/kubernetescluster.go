package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/virtflow/virtflow/ent/schema/fieldtype"
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
	fixed := entgql.Skip(entgql.SkipMutationUpdateInput)
	return []ent.Field{
		slugField(),
		descriptionField(),
		field.String("version").NotEmpty().Match(semverish).Annotations(entgql.OrderField("VERSION")),
		field.Enum("scheduling_mode").NamedValues(enumValues("Spread", "Pack")...).Default("SPREAD"),
		field.Int("control_plane_count").Default(3).Range(1, 7),
		field.Int("worker_count").Default(3).Range(0, 1000),
		field.Strings("plugins").Optional(),
		field.String("bastion").Optional().MaxLen(253).
			Comment("deprecated: a free-form address nothing used; bastion_enabled creates a real bastion VM").
			Annotations(entgql.Directives(entgql.Deprecated("set bastionEnabled: the bastion is then a VM of the cluster (role BASTION in nodes)"))),
		field.Bool("bastion_enabled").Default(false).Annotations(fixed).
			Comment("a bastion VM (role BASTION) with the tenant's SSH keys, the one way in to the nodes"),
		field.String("pod_cidr").Default("10.244.0.0/16").Annotations(fixed).Comment("the pods' network (kubeadm --pod-network-cidr)"),
		field.String("service_cidr").Default("10.96.0.0/12").Annotations(fixed).Comment("the services' network (kubeadm --service-cidr)"),
		field.Enum("status").NamedValues(enumValues("Initializing", "Creating", "Active", "Updating", "Deleting", "Error")...).
			Default("INITIALIZING").Annotations(entgql.OrderField("STATUS"), system),
		field.String("status_reason").Optional().MaxLen(1024).Annotations(system),
		field.Enum("phase").NamedValues(enumValues("Pending", "Placing", "Pki", "Bootstrapping", "Ready", "Deleting")...).
			Default("PENDING").Annotations(system).
			Comment("the workflow's step (package kubecluster): each task does one step and records the next here"),
		field.JSON("nodes", []fieldtype.KubernetesNode{}).Optional().Annotations(system).
			Comment("the nodes and their bootstrap progress, recorded before their VMs are created"),
		field.Int("next_worker_index").Default(0).NonNegative().Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("the index the next new worker gets: indexes are never reused, so names never collide"),
		field.Int("next_control_plane_index").Default(0).NonNegative().Annotations(entgql.Skip(entgql.SkipAll)),
		field.String("api_endpoint").Optional().Annotations(system).Comment("https://<VIP>:6443"),
		field.String("api_vip").Optional().Annotations(system).Comment("the API's virtual IP, allocated by IPAM"),
		field.Int("api_load_balancer_id").Optional().Nillable().Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("the load balancer carrying api_vip (port 6443 to the control planes); an id, not an edge, so the load balancer's table is not changed"),
		field.Text("ca_certificate").Optional().Annotations(system).Comment("the cluster CA's certificate (PEM)"),
		field.Text("pki_sealed").Optional().Sensitive().Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("the cluster's keys and certificates, sealed with the server's secret key (internal/secrets)"),
		field.String("join_token_id").Optional().Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("the public part of the current kubeadm bootstrap token"),
		field.String("join_token_sealed").Optional().Sensitive().Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("the current kubeadm bootstrap token, sealed"),
		field.Time("join_token_expires_at").Optional().Nillable().Annotations(entgql.Skip(entgql.SkipAll)),
		field.Enum("service_mesh_status").NamedValues(enumValues("None", "Installing", "Active", "Error")...).
			Default("NONE").Annotations(system).
			Comment("the mesh add-on as the first control plane's bootstrap reported it"),
	}
}

// Edges of the KubernetesCluster.
func (KubernetesCluster) Edges() []ent.Edge {
	return append([]ent.Edge{
		edge.From("tenant", Tenant.Type).Ref("kubernetes_clusters").Unique().Required(),
		edge.From("region", Region.Type).Ref("kubernetes_clusters").Unique().Required(),
		edge.From("service_mesh", ServiceMesh.Type).Ref("kubernetes_clusters").Unique(),
		edge.To("virtual_machines", VirtualMachine.Type).Annotations(entgql.RelayConnection()),
		edge.From("flavor", Flavor.Type).Ref("kubernetes_clusters").Unique().
			Comment("the flavor of the cluster's VMs (required at create)"),
		edge.From("image", Image.Type).Ref("kubernetes_clusters").Unique().
			Comment("the image of the cluster's VMs"),
	}, maintainedBy("kubernetes_clusters")...)
}

// Indexes of the KubernetesCluster.
func (KubernetesCluster) Indexes() []ent.Index {
	return []ent.Index{index.Fields("name").Edges("tenant").Unique()}
}

// Annotations of the KubernetesCluster.
func (KubernetesCluster) Annotations() []schema.Annotation { return editable("kubernetesClusters") }
