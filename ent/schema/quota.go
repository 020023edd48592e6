package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Quota limits what a tenant may reserve in a host group: CPU as a percentage of the group's
// cores (seed 004) and as a vCPU count, memory and storage. Usage is kept by the scheduler in the
// same transaction as each placement and is never written through create/update inputs.
type Quota struct {
	ent.Schema
}

// Mixin of the Quota.
func (Quota) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the Quota.
func (Quota) Fields() []ent.Field {
	system := entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)
	return []ent.Field{
		field.Float("cpu_percent").Default(100).Range(0, 100).Comment("share of the host group's cores"),
		field.Int("vcpus").Default(0).NonNegative(),
		field.Int64("memory_mb").Default(0).NonNegative(),
		field.Int64("storage_gb").Default(0).NonNegative(),
		field.Int("used_vcpus").Default(0).NonNegative().Annotations(system),
		field.Int64("used_memory_mb").Default(0).NonNegative().Annotations(system),
		field.Int64("used_storage_gb").Default(0).NonNegative().Annotations(system),
		field.Int64("snapshot_gb").Default(0).NonNegative().Comment("GiB of snapshots the tenant may keep on the group's nodes (0: no limit)"),
		field.Int64("used_snapshot_gb").Default(0).NonNegative().Annotations(system),
		field.Int64("backup_gb").Default(0).NonNegative().Comment("GiB of backups the tenant may keep of VMs in the group (0: no limit)"),
		field.Int64("used_backup_gb").Default(0).NonNegative().Annotations(system),
	}
}

// Edges of the Quota.
func (Quota) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("tenant", Tenant.Type).Ref("quotas").Unique().Required(),
		edge.From("host_group", HostGroup.Type).Ref("quotas").Unique().Required(),
	}
}

// Indexes of the Quota: one quota per tenant and host group.
func (Quota) Indexes() []ent.Index {
	return []ent.Index{index.Edges("tenant", "host_group").Unique()}
}

// Annotations of the Quota.
func (Quota) Annotations() []schema.Annotation { return editable("quotas") }
