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
	return []ent.Field{
		slugField(),
		field.Int64("size_gb").Range(1, 1<<20).Annotations(entgql.OrderField("SIZE_GB")),
		field.Enum("type").NamedValues(enumValues("Hdd", "Ssd", "Nvme")...).Default("SSD"),
		field.String("storage_pool").Optional().MaxLen(128),
		field.Enum("status").NamedValues(enumValues("Pending", "Available", "Attached", "Deleting", "Error")...).
			Default("PENDING").Annotations(entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)),
	}
}

// Edges of the Volume.
func (Volume) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("tenant", Tenant.Type).Ref("volumes").Unique().Required(),
		edge.From("node", ComputeNode.Type).Ref("volumes").Unique(),
		edge.From("virtual_machine", VirtualMachine.Type).Ref("volumes").Unique(),
		edge.To("assignments", Assignment.Type).Annotations(entgql.RelayConnection()),
	}
}

// Indexes of the Volume: names are unique within a tenant.
func (Volume) Indexes() []ent.Index {
	return []ent.Index{index.Fields("name").Edges("tenant").Unique()}
}

// Annotations of the Volume.
func (Volume) Annotations() []schema.Annotation { return editable("volumes") }
