package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
)

// Tenant is an isolated customer of the platform with its members, resources and quotas.
type Tenant struct {
	ent.Schema
}

// Mixin of the Tenant.
func (Tenant) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the Tenant.
func (Tenant) Fields() []ent.Field {
	return []ent.Field{
		uniqueSlugField(),
		field.String("display_name").Optional().MaxLen(128),
		descriptionField(),
		field.Enum("status").NamedValues(enumValues("Active", "Suspended")...).Default("ACTIVE"),
	}
}

// Edges of the Tenant.
func (Tenant) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("members", User.Type).Annotations(entgql.RelayConnection()),
		edge.To("quotas", Quota.Type).Annotations(entgql.RelayConnection()),
		edge.To("virtual_machines", VirtualMachine.Type).Annotations(entgql.RelayConnection()),
		edge.To("volumes", Volume.Type).Annotations(entgql.RelayConnection()),
		edge.To("snapshots", Snapshot.Type).Annotations(entgql.RelayConnection(), entgql.Skip(entgql.SkipMutationCreateInput|entgql.SkipMutationUpdateInput)),
		edge.To("backups", Backup.Type).Annotations(entgql.RelayConnection(), entgql.Skip(entgql.SkipMutationCreateInput|entgql.SkipMutationUpdateInput)),
		edge.To("load_balancers", LoadBalancer.Type).Annotations(entgql.RelayConnection()),
		edge.To("region_services", RegionService.Type).Annotations(entgql.RelayConnection()),
		edge.To("global_services", GlobalService.Type).Annotations(entgql.RelayConnection()),
		edge.To("kubernetes_clusters", KubernetesCluster.Type).Annotations(entgql.RelayConnection()),
		edge.To("networks", Network.Type).Annotations(entgql.RelayConnection()),
		edge.To("notices", Notice.Type).Annotations(entgql.RelayConnection()),
		edge.To("usage_records", UsageRecord.Type).Annotations(entgql.RelayConnection()),
		edge.To("api_tokens", APIToken.Type).Annotations(entgql.RelayConnection()),
		edge.To("role_bindings", RoleBinding.Type).Annotations(entgql.RelayConnection()),
		edge.To("ssh_keys", SSHKey.Type).Annotations(entgql.RelayConnection()),
		edge.To("security_rules", SecurityRule.Type).Annotations(entgql.RelayConnection()),
		edge.To("default_vm_network", Network.Type).Unique().
			Comment("the network a VM of the tenant is attached to when its request names none (createVirtualMachine networkIDs, createRegionService networkIDs); without it such a VM has no NIC"),
	}
}

// Annotations of the Tenant.
func (Tenant) Annotations() []schema.Annotation { return editable("tenants") }
