package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Assignment hands a resource (a VM, a volume, a snapshot, a backup or an image made from a
// VM) to a node's agent with the state it should be in; the agent reports the state it
// observed. Written by workers and agents only.
type Assignment struct {
	ent.Schema
}

// Mixin of the Assignment.
func (Assignment) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the Assignment.
func (Assignment) Fields() []ent.Field {
	return []ent.Field{
		field.Enum("desired_state").NamedValues(enumValues("Running", "Stopped", "Absent")...).Default("RUNNING"),
		field.Enum("status").NamedValues(enumValues("Pending", "Applying", "Applied", "Failed")...).
			Default("PENDING").Annotations(entgql.OrderField("STATUS")),
		field.String("status_reason").Optional().MaxLen(1024),
		field.String("observed_state").Optional().MaxLen(64),
		field.Int64("generation").Default(1).Positive().Comment("bumped on every change of the desired state"),
		field.Int("vm_id").Optional().Nillable().Immutable().
			Comment("the VM's id, copied from the virtual_machine edge at create: the node's agent reads it even when it may not read the VM (moved to another node, or deleted with force) and so can still remove its domain"),
		field.Text("config_drive").Optional().Annotations(forceResolver()).
			Comment("what the VM's config drive says (JSON of configdrive.Spec: instance-id, hostname, user-data, NICs with addresses, gateways and DNS, SSH keys), rendered by the provisioning task; the agent builds the cidata ISO from it; null for a Kubernetes cluster's node unless the viewer is the node's agent or may read the cluster's kubeconfig"),
	}
}

// Edges of the Assignment.
func (Assignment) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("node", ComputeNode.Type).Ref("assignments").Unique().Required(),
		edge.From("virtual_machine", VirtualMachine.Type).Ref("assignments").Unique(),
		edge.From("volume", Volume.Type).Ref("assignments").Unique(),
		edge.From("snapshot", Snapshot.Type).Ref("assignments").Unique().
			Comment("the snapshot to create (RUNNING; REVERTING: copy it back onto its VM's root disk) or delete (ABSENT)"),
		edge.From("backup", Backup.Type).Ref("assignments").Unique().
			Comment("the backup to copy to the backup target (RUNNING) or delete from it (ABSENT)"),
		edge.From("image", Image.Type).Ref("assignments").Unique().
			Comment("the image to make from its source VM's root disk (createImageFromVirtualMachine): the node's agent copies the stopped VM's disk and uploads the copy as the image's bytes"),
	}
}

// Indexes of the Assignment: the database allows one assignment per VM and node, and one
// live (not desired ABSENT) assignment per VM, so that no node's agent is ever told to run a
// VM twice and no path can revive a leftover assignment beside the current one (issue 24).
func (Assignment) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("status"),
		index.Fields("vm_id").Edges("node").Unique().StorageKey("assignment_vm_node"),
		index.Fields("vm_id").Unique().StorageKey("assignment_vm_live").
			Annotations(entsql.IndexWhere("vm_id IS NOT NULL AND desired_state <> 'ABSENT'")),
	}
}

// Hooks of the Assignment.
func (Assignment) Hooks() []ent.Hook { return []ent.Hook{copyVMID()} }

// Annotations of the Assignment.
func (Assignment) Annotations() []schema.Annotation { return readOnly("assignments") }
