package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Backup is a copy of a VM's root disk on its region's backup target (a directory every node
// of the region mounts at the same path, e.g. over NFS); it outlives the VM and is restored
// into a new VM. Written by the agent of the VM's node through the backup's own Assignment
// (package provision, backups.go).
type Backup struct {
	ent.Schema
}

// Mixin of the Backup.
func (Backup) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the Backup.
func (Backup) Fields() []ent.Field {
	system := entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)
	return []ent.Field{
		slugField(),
		field.String("description").Optional().MaxLen(1024),
		field.Enum("status").
			NamedValues(enumValues("Pending", "Creating", "Available", "Deleting", "Error")...).
			Default("PENDING").Annotations(entgql.OrderField("STATUS"), system).
			Comment("PENDING until the VM's node's agent takes it, CREATING while it copies the disk to the backup target, AVAILABLE once the copy is complete, DELETING until the copy is gone, ERROR with the agent's reason"),
		field.String("status_reason").Optional().MaxLen(1024).Annotations(system),
		field.Int64("size_gb").Default(0).NonNegative().Annotations(entgql.OrderField("SIZE_GB"), system).
			Comment("the storage charged to the tenant's backup quota: the VM's root disk size when it was taken"),
		field.String("location").Optional().MaxLen(1024).
			Annotations(entgql.Skip(entgql.SkipMutationCreateInput|entgql.SkipMutationUpdateInput|entgql.SkipWhereInput), forceResolver()).
			Comment("the directory of the backup target holding the copy (the region's backup target when it was taken); an operator's path on the nodes, so null unless the viewer may edit regions (operators, admins) or is the agent of a node that copies or restores it"),
		field.Bool("scheduled").Default(false).Annotations(system).
			Comment("true when the VM's backup schedule made it (the worker keeps backupRetain of these per VM)"),
		field.String("image_name").Optional().MaxLen(128).Annotations(system).
			Comment("the name of the VM's image when it was taken"),
		field.String("flavor_name").Optional().MaxLen(128).Annotations(system).
			Comment("the name of the VM's flavor when it was taken"),
	}
}

// Edges of the Backup.
func (Backup) Edges() []ent.Edge {
	system := entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)
	return []ent.Edge{
		edge.From("tenant", Tenant.Type).Ref("backups").Unique().Required().Annotations(system),
		edge.From("region", Region.Type).Ref("backups").Unique().Required().Annotations(system),
		edge.From("virtual_machine", VirtualMachine.Type).Ref("backups").Unique().
			Annotations(entgql.Skip(entgql.SkipMutationUpdateInput)).
			Comment("the VM it copies; null once the VM was deleted (the backup stays and can be restored)"),
		edge.From("node", ComputeNode.Type).Ref("backups").Unique().Annotations(system).
			Comment("the node whose agent copied it"),
		edge.To("assignments", Assignment.Type).Annotations(entgql.RelayConnection()),
		edge.To("restored_virtual_machines", VirtualMachine.Type).Annotations(entgql.RelayConnection(), system).
			Comment("the VMs restored from it"),
	}
}

// Indexes of the Backup: names are unique within a tenant.
func (Backup) Indexes() []ent.Index {
	return []ent.Index{index.Fields("name").Edges("tenant").Unique()}
}

// Annotations of the Backup.
func (Backup) Annotations() []schema.Annotation { return readOnly("backups") }
