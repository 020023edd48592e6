package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Snapshot is a point-in-time copy of a VM's root disk kept in its node's storage pool, to
// revert the VM to. Created, reverted and deleted through the snapshot's own Assignment,
// which the node's agent realizes (package provision, snapshots.go).
type Snapshot struct {
	ent.Schema
}

// Mixin of the Snapshot.
func (Snapshot) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the Snapshot.
func (Snapshot) Fields() []ent.Field {
	system := entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)
	return []ent.Field{
		slugField(),
		field.String("description").Optional().MaxLen(1024),
		field.Enum("status").
			NamedValues(enumValues("Pending", "Creating", "Available", "Reverting", "Deleting", "Error")...).
			Default("PENDING").Annotations(entgql.OrderField("STATUS"), system).
			Comment("PENDING until its node's agent takes it, CREATING while the agent copies the disk, AVAILABLE once the copy is complete, REVERTING while the agent copies it back onto the VM's root disk, DELETING until its copy is gone, ERROR with the agent's reason"),
		field.String("status_reason").Optional().MaxLen(1024).Annotations(system),
		field.Int64("size_gb").Default(0).NonNegative().Annotations(entgql.OrderField("SIZE_GB"), system).
			Comment("the storage charged to the tenant's snapshot quota: the VM's root disk size when it was taken"),
		field.Int("reverts").Default(0).NonNegative().Annotations(system).
			Comment("how many times the VM was reverted to it"),
	}
}

// Edges of the Snapshot.
func (Snapshot) Edges() []ent.Edge {
	system := entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)
	return []ent.Edge{
		edge.From("tenant", Tenant.Type).Ref("snapshots").Unique().Required().Annotations(system),
		edge.From("virtual_machine", VirtualMachine.Type).Ref("snapshots").Unique().
			Annotations(entgql.Skip(entgql.SkipMutationUpdateInput)).
			Comment("the VM whose disk it copies; null once the VM was deleted (then the snapshot can only be deleted)"),
		edge.From("node", ComputeNode.Type).Ref("snapshots").Unique().Annotations(system).
			Comment("the node whose storage pool holds it"),
		edge.To("assignments", Assignment.Type).Annotations(entgql.RelayConnection()),
	}
}

// Indexes of the Snapshot: names are unique per VM.
func (Snapshot) Indexes() []ent.Index {
	return []ent.Index{index.Fields("name").Edges("virtual_machine").Unique(), index.Edges("tenant")}
}

// Annotations of the Snapshot.
func (Snapshot) Annotations() []schema.Annotation { return readOnly("snapshots") }
