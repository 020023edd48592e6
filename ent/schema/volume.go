package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Volume is a tenant's block device in a node's storage pool, optionally attached to a VM.
type Volume struct {
	ent.Schema
}

// Mixin of the Volume.
func (Volume) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the Volume.
func (Volume) Fields() []ent.Field {
	system := entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)
	return []ent.Field{
		slugField(),
		field.String("description").Optional().MaxLen(1024),
		field.Int64("size_gb").Range(1, 1<<20).Annotations(entgql.OrderField("SIZE_GB"), entgql.Skip(entgql.SkipMutationUpdateInput)),
		field.Enum("type").NamedValues(enumValues("Hdd", "Ssd", "Nvme")...).Default("SSD").
			Annotations(entgql.Skip(entgql.SkipMutationUpdateInput)).
			Comment("the storage the seed names (HDD, SSD, NVMe); the volume is created in the storage pool its node's agent keeps for that type"),
		field.String("storage_pool").Optional().MaxLen(128).Annotations(system).
			Comment("the node's storage pool holding the volume, set when it is placed"),
		field.Enum("status").
			NamedValues(enumValues("Pending", "Creating", "Available", "Attaching", "Attached", "Detaching", "Deleting", "Error")...).
			Default("PENDING").Annotations(system).
			Comment("PENDING until first attached (a volume lives on the node of the first VM it is attached to), CREATING while that node's agent creates it, AVAILABLE on the node and unattached, ATTACHING/DETACHING until the VM's domain has it or not, ATTACHED, DELETING until its data is gone"),
		field.String("status_reason").Optional().MaxLen(1024).Annotations(system).
			Comment("what is happening to the volume, e.g. that an attach takes effect at the VM's next start"),
	}
}

// Edges of the Volume.
func (Volume) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("tenant", Tenant.Type).Ref("volumes").Unique().Required().
			Annotations(entgql.Skip(entgql.SkipMutationUpdateInput)),
		edge.From("node", ComputeNode.Type).Ref("volumes").Unique().
			Annotations(entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)),
		edge.From("virtual_machine", VirtualMachine.Type).Ref("volumes").Unique().
			Annotations(entgql.Skip(entgql.SkipMutationUpdateInput)).
			Comment("the VM it is attached to (or being attached to or detached from); attachVolume and detachVolume change it"),
		edge.To("assignments", Assignment.Type).Annotations(entgql.RelayConnection()),
	}
}

// Indexes of the Volume: names are unique within a tenant.
func (Volume) Indexes() []ent.Index {
	return []ent.Index{index.Fields("name").Edges("tenant").Unique()}
}

// Annotations of the Volume.
func (Volume) Annotations() []schema.Annotation { return editable("volumes") }
