package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/virtflow/virtflow/agent/configdrive"
	"github.com/virtflow/virtflow/ent/schema/fieldtype"
)

// VirtualMachine is a tenant's VM: flavor, image, the node the scheduler placed it on, its NICs
// (ports) and volumes, and its lifecycle status (SPEC.md §5) with a reason that always says what
// is happening or what failed. Status and placement are written by the system.
type VirtualMachine struct {
	ent.Schema
}

// Mixin of the VirtualMachine.
func (VirtualMachine) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the VirtualMachine.
func (VirtualMachine) Fields() []ent.Field {
	system := entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)
	return []ent.Field{
		slugField(),
		descriptionField(),
		field.Enum("type").NamedValues(enumValues("ControlPlane", "Worker", "Management", "General")...).Default("GENERAL"),
		field.Enum("boot_device").NamedValues(enumValues("Disk", "Cdrom", "Floppy")...).Default("DISK"),
		field.Enum("status").NamedValues(enumValues("Initializing", "Scheduled", "Creating", "Active", "Starting",
			"Stopping", "Stopped", "Rebooting", "Deleting", "Deleted", "Error", "Unknown", "Moving")...).
			Default("INITIALIZING").Annotations(entgql.OrderField("STATUS"), system).
			Comment("UNKNOWN while its node is DOWN: nobody can tell whether it runs; back to the observed state when the node returns. MOVING while a drain or a resize moves it to another node: no copy runs until its new node reports it (ACTIVE or STOPPED, as before the move)"),
		field.String("status_reason").Optional().MaxLen(1024).Annotations(system),
		field.Time("status_changed_at").Default(time.Now).Annotations(entgql.OrderField("STATUS_CHANGED_AT"), system).
			Comment("when status last changed; the reconcile loop retries or fails what stays in a transitional state too long"),
		field.JSON("labels", fieldtype.Labels{}).Optional(),
		field.JSON("schedule_policy", fieldtype.SchedulePolicy{}).Optional(),
		field.Int("revision").Default(1).Positive().Annotations(system),
		field.Int("max_revision_history").Default(10).Range(1, 100),
		field.JSON("revision_history", []fieldtype.VMRevision{}).Optional().Annotations(system).
			Comment("the spec at each earlier revision, newest last, at most max_revision_history entries"),
		field.Int("allocated_vcpus").Default(0).NonNegative().Annotations(system).
			Comment("what placement charged the node and the quota; released exactly on delete"),
		field.Int64("allocated_memory_mb").Default(0).NonNegative().Annotations(system),
		field.Int64("allocated_disk_gb").Default(0).NonNegative().Annotations(system),
		field.Enum("state_after_move").NamedValues(enumValues("Running", "Stopped")...).Optional().Nillable().
			Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("while MOVING: the power state the VM had before the move, which its new node's assignment asks for"),
		field.Bool("availability_zone_chosen").Default(false).Annotations(system).
			Comment("the tenant chose availability_zone at create: moves and resizes keep the VM in it; otherwise the zone follows the node the VM is on"),
		field.Int64("exclusive_mask").Default(0).NonNegative().Annotations(system).
			Comment("what an exclusive flavor's VM holds of its node's exclusive_mask; released with the VM"),
		field.Int("numa_node").Optional().Nillable().NonNegative().Annotations(system).
			Comment("the NUMA node a NUMA_NODE flavor's VM owns on its node"),
		field.Enum("guest_state").NamedValues(enumValues("Unknown", "Booting", "Ready", "Unreachable")...).Default("UNKNOWN").
			Annotations(entgql.OrderField("GUEST_STATE"), system).
			Comment("what the guest itself said (package guest): BOOTING once its domain runs, READY when the guest (or the QEMU guest agent) reported in, UNREACHABLE when it did not within the deadline; UNKNOWN while the domain does not run"),
		field.Time("guest_state_changed_at").Optional().Nillable().Annotations(system).
			Comment("when guest_state last changed; a BOOTING guest's deadline counts from here"),
		field.Time("guest_ready_at").Optional().Nillable().Annotations(entgql.OrderField("GUEST_READY_AT"), system).
			Comment("when the guest first reported READY since its domain last started"),
		field.String("guest_hostname").Optional().MaxLen(255).Annotations(system).
			Comment("the host name the guest reported"),
		field.Strings("guest_addresses").Optional().Annotations(system).
			Comment("the addresses the guest reported (bare IPs, no prefix length)"),
		field.String("guest_credential_hash").Optional().Sensitive().MaxLen(64).
			Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("SHA-256 (hex) of the credential on the VM's config drive; the plaintext is only on the drive"),
		field.Time("guest_credential_expires_at").Optional().Nillable().Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("after this the credential is refused; a rebuilt drive carries a new one"),
		field.JSON("routes", []fieldtype.VMRoute{}).Optional().Annotations(system).
			Comment("the routed network of the VM's addresses, as its node's agent reported it (issue 27)"),
		field.Int("backup_interval_hours").Default(0).Range(0, 8760).
			Comment("take a backup every this many hours (0: no scheduled backups); the worker takes them"),
		field.Int("backup_retain").Default(7).Range(1, 100).
			Comment("how many scheduled backups of the VM are kept: the oldest beyond are deleted"),
		field.Time("last_scheduled_backup_at").Optional().Nillable().Annotations(system).
			Comment("when the worker last took a scheduled backup of the VM"),
		field.Text("user_data").Optional().MaxLen(65536).
			Annotations(entgql.Skip(entgql.SkipWhereInput|entgql.SkipMutationUpdateInput), forceResolver()).
			Comment("the request's #cloud-config (at most 64 KiB), put on the VM's config drive; null for a Kubernetes cluster's node unless the viewer may read the cluster's kubeconfig"),
	}
}

// Edges of the VirtualMachine.
func (VirtualMachine) Edges() []ent.Edge {
	placedBySchedulerEdge := entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)
	// Moving a VM to another tenant, region or flavor would bypass quota and capacity checks.
	fixedAtCreate := entgql.Skip(entgql.SkipMutationUpdateInput)
	return append([]ent.Edge{
		edge.From("tenant", Tenant.Type).Ref("virtual_machines").Unique().Required().Annotations(fixedAtCreate),
		edge.From("region", Region.Type).Ref("virtual_machines").Unique().Required().Annotations(fixedAtCreate),
		edge.From("flavor", Flavor.Type).Ref("virtual_machines").Unique().Required().Annotations(fixedAtCreate),
		edge.From("image", Image.Type).Ref("virtual_machines").Unique(),
		edge.From("availability_zone", AvailabilityZone.Type).Ref("virtual_machines").Unique().Annotations(fixedAtCreate).
			Comment("chosen at create (placement keeps the VM in it) or else the zone of the node it was placed on"),
		edge.From("cluster", Cluster.Type).Ref("virtual_machines").Unique().Annotations(placedBySchedulerEdge).
			Comment("set by the scheduler"),
		edge.From("node", ComputeNode.Type).Ref("virtual_machines").Unique().Annotations(placedBySchedulerEdge).
			Comment("set by the scheduler; moved only by a drain"),
		edge.From("kubernetes_cluster", KubernetesCluster.Type).Ref("virtual_machines").Unique(),
		edge.From("region_service", RegionService.Type).Ref("virtual_machines").Unique().Annotations(placedBySchedulerEdge).
			Comment("set when the VM is a replica of a region service"),
		edge.To("ports", Port.Type).Annotations(entgql.RelayConnection()),
		edge.To("volumes", Volume.Type).Annotations(entgql.RelayConnection()),
		edge.To("snapshots", Snapshot.Type).Annotations(entgql.RelayConnection(), placedBySchedulerEdge),
		edge.To("backups", Backup.Type).Annotations(entgql.RelayConnection(), placedBySchedulerEdge),
		edge.From("restored_from", Backup.Type).Ref("restored_virtual_machines").Unique().Annotations(placedBySchedulerEdge).
			Comment("the backup whose disk became this VM's root disk (restoreBackup, cloneVirtualMachine); null for a VM made from its image"),
		edge.To("assignments", Assignment.Type).Annotations(entgql.RelayConnection()),
		edge.To("networks", Network.Type).Annotations(fixedAtCreate).
			Comment("the networks the VM was created on (one NIC, a port with its MAC and address, on each); empty means the tenant's default VM network"),
		edge.To("security_rules", SecurityRule.Type).Annotations(entgql.RelayConnection(),
			entgql.Skip(entgql.SkipMutationCreateInput|entgql.SkipMutationUpdateInput)).
			Comment("the ACL rules applied in the namespace of the VM's addresses"),
		edge.To("ssh_keys", SSHKey.Type).Annotations(fixedAtCreate).
			Comment("public keys for the image's default user, on the VM's config drive"),
	}, maintainedBy("virtual_machines")...)
}

// Indexes of the VirtualMachine: names are unique within a tenant.
func (VirtualMachine) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("name").Edges("tenant").Unique(),
		index.Fields("status"),
		index.Fields("guest_state"),
		index.Fields("guest_credential_hash").Unique(),
		index.Edges("node"),
		index.Edges("region_service"),
	}
}

// Annotations of the VirtualMachine.
func (VirtualMachine) Annotations() []schema.Annotation { return editable("virtualMachines") }

// Hooks of the VirtualMachine.
func (VirtualMachine) Hooks() []ent.Hook {
	return []ent.Hook{
		validateLabels(),
		validatePolicy(),
		validateField("user_data", "userData", configdrive.ValidateUserData),
	}
}
