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

// ComputeNode is the compute side of a server host (SPEC.md's "Node"): one per host, in a
// cluster, run by a node agent. It is called ComputeNode so that GraphQL's Relay `Node`
// interface keeps its name. Status and allocation are written by the system (agent
// heartbeats, the monitor, the scheduler), not through create/update inputs.
type ComputeNode struct {
	ent.Schema
}

// Mixin of the ComputeNode.
func (ComputeNode) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the ComputeNode.
func (ComputeNode) Fields() []ent.Field {
	system := entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)
	return []ent.Field{
		uniqueSlugField(),
		field.Enum("status").NamedValues(enumValues("Ready", "NotReady", "Down", "Unknown")...).
			Default("UNKNOWN").Annotations(entgql.OrderField("STATUS"), system),
		field.String("status_reason").Optional().MaxLen(1024).Annotations(system),
		field.Bool("schedulable").Default(true).Comment("false while cordoned"),
		field.String("cordon_reason").Optional().MaxLen(1024).Annotations(system).
			Comment("why the node is cordoned: set by cordonNode, drainNode or the node monitor"),
		field.Enum("drain_state").NamedValues(enumValues("Draining", "Drained", "Failed")...).Optional().Nillable().
			Annotations(entgql.OrderField("DRAIN_STATE"), system).Comment("progress of the last drain"),
		field.String("drain_message").Optional().MaxLen(4096).Annotations(system).
			Comment("what the drain is doing, or the VMs it could not move"),
		field.Time("drain_deadline").Optional().Nillable().Annotations(system),
		field.JSON("drain_unmovable", []fieldtype.DrainUnmovable{}).Optional().Annotations(system).
			Comment("the VMs the last drain could not move and why, listed when it started: the drain does not wait for them and ends FAILED once the others moved"),
		field.Bool("drain_forced").Default(false).Annotations(system).
			Comment("the drain was started with force (the node is fenced or an operator said so): its VMs are recreated elsewhere without waiting for the node to confirm their old copies are gone"),
		field.JSON("labels", fieldtype.Labels{}).Optional(),
		field.Int("cpu_capacity").Default(0).NonNegative().Comment("vCPUs offered to VMs"),
		field.Int64("memory_capacity_mb").Default(0).NonNegative(),
		field.Int64("disk_capacity_gb").Default(0).NonNegative(),
		field.Int("cpu_allocated").Default(0).NonNegative().Annotations(system),
		field.Int64("memory_allocated_mb").Default(0).NonNegative().Annotations(system),
		field.Int64("disk_allocated_gb").Default(0).NonNegative().Annotations(system),
		field.Int("reserved_cpus").Default(0).NonNegative().Annotations(system).
			Comment("host CPUs the agent keeps for the host (never given to VMs; not in cpu_capacity)"),
		field.JSON("numa_nodes", []fieldtype.NUMANode{}).Optional().Annotations(system).
			Comment("the host's NUMA nodes as its agent reports them, with their CPUs and memory"),
		field.Int64("exclusive_mask").Default(0).NonNegative().Annotations(system).
			Comment("what exclusive VMs hold: bit 0 the whole host, bit i+1 NUMA node i; placement sets it in the commit"),
		field.String("os_name").Optional().MaxLen(64).Comment("e.g. Ubuntu"),
		field.String("os_version").Optional().MaxLen(64),
		field.String("kernel_version").Optional().MaxLen(128).Annotations(system).
			Comment("the host's kernel release (uname -r), as its node agent reports it"),
		field.String("domain_type").Optional().MaxLen(16).Annotations(system).
			Comment("the libvirt domain type the node agent defines VMs with: kvm, qemu (software emulation), test or simulated"),
		field.String("agent_version").Optional().MaxLen(64).Annotations(system),
		field.Time("last_heartbeat_at").Optional().Nillable().Annotations(entgql.OrderField("LAST_HEARTBEAT_AT"), system),
		field.Bool("auto_cordon").Default(false),
		field.Int("auto_cordon_interval_seconds").Default(300).Positive(),
		field.Bool("auto_drain").Default(false),
		field.Int("auto_drain_interval_seconds").Default(1800).Positive(),
		field.Bool("alerts_enabled").Default(true),
	}
}

// Edges of the ComputeNode.
func (ComputeNode) Edges() []ent.Edge {
	return append([]ent.Edge{
		edge.From("host", Host.Type).Ref("node").Unique().Required(),
		edge.From("cluster", Cluster.Type).Ref("nodes").Unique().Required(),
		edge.From("availability_zone", AvailabilityZone.Type).Ref("nodes").Unique(),
		edge.To("providers", Provider.Type).Annotations(entgql.RelayConnection()),
		edge.From("checks", Check.Type).Ref("nodes").Comment("the checks naming this node (a node may be named by several checks)").
			Annotations(entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)),
		edge.From("load_balancers", LoadBalancer.Type).Ref("nodes").Comment("the load balancers this node serves (a node may serve several)").
			Annotations(entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)),
		edge.To("assignments", Assignment.Type).Annotations(entgql.RelayConnection()),
		edge.To("virtual_machines", VirtualMachine.Type).Annotations(entgql.RelayConnection()),
		edge.To("volumes", Volume.Type).Annotations(entgql.RelayConnection()),
		edge.To("snapshots", Snapshot.Type).Annotations(entgql.RelayConnection(), entgql.Skip(entgql.SkipMutationCreateInput|entgql.SkipMutationUpdateInput)),
		edge.To("backups", Backup.Type).Annotations(entgql.RelayConnection(), entgql.Skip(entgql.SkipMutationCreateInput|entgql.SkipMutationUpdateInput)),
		edge.To("events", Event.Type).Annotations(entgql.RelayConnection()),
		edge.To("alerts", Alert.Type).Annotations(entgql.RelayConnection()),
		edge.To("role_bindings", RoleBinding.Type).Annotations(entgql.RelayConnection()),
		edge.From("maintenances", Maintenance.Type).Ref("nodes").Annotations(entgql.RelayConnection()),
	}, maintainedBy("nodes")...)
}

// Annotations of the ComputeNode.
func (ComputeNode) Annotations() []schema.Annotation { return editable("computeNodes") }

// Hooks of the ComputeNode.
func (ComputeNode) Hooks() []ent.Hook {
	return []ent.Hook{
		validateLabels(),
	}
}

// Indexes of the ComputeNode: snapshots list a cluster's nodes.
func (ComputeNode) Indexes() []ent.Index {
	return []ent.Index{index.Edges("cluster")}
}
