package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"

	"github.com/virtflow/virtflow/ent/schema/fieldtype"
)

// Flavor is a VM size: vCPUs, memory and disk, a CPU policy (shared with a CPU-time limit, or
// dedicated pinned cores, which cost more), IO and network limits and the hourly price,
// optionally per host model. An exclusive flavor (HOST, NUMA_NODE) is a whole machine or one
// NUMA node of it: no other VM shares it, and it runs without limits.
type Flavor struct {
	ent.Schema
}

// Mixin of the Flavor.
func (Flavor) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the Flavor.
func (Flavor) Fields() []ent.Field {
	return []ent.Field{
		uniqueSlugField(),
		descriptionField(),
		field.Int("vcpus").Range(1, 1024).Annotations(entgql.OrderField("VCPUS")),
		field.Int64("memory_mb").Range(64, 1<<24).Annotations(entgql.OrderField("MEMORY_MB")),
		field.Int64("disk_gb").Default(0).NonNegative(),
		field.Enum("cpu_policy").NamedValues(enumValues("Shared", "Dedicated")...).Default("SHARED"),
		field.Int("cpu_limit_percent").Default(100).Range(1, 100).Comment("CPU-time limit per vCPU for shared flavors"),
		field.Int("disk_iops_limit").Optional().NonNegative(),
		field.Int("disk_mbps_limit").Optional().NonNegative(),
		field.Int("network_mbps_limit").Optional().NonNegative().
			Comment("bandwidth limit of each NIC, in and out, in megabits per second (<bandwidth> in the domain)"),
		field.Enum("exclusive").NamedValues(enumValues("None", "Host", "NumaNode")...).Default("NONE").
			Comment("NONE shares hosts; HOST takes a whole host, NUMA_NODE one NUMA node of a host, alone and without CPU/IO limits"),
		field.Float("price_per_hour").Default(0).Min(0).Annotations(entgql.OrderField("PRICE_PER_HOUR")),
		field.JSON("prices_by_host_model", []fieldtype.ModelPrice{}).Optional(),
		field.Bool("disabled").Default(false).Comment("hidden from new requests; existing VMs keep it"),
	}
}

// Edges of the Flavor.
func (Flavor) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("provider", Provider.Type).Ref("flavors").Unique(),
		edge.To("virtual_machines", VirtualMachine.Type).Annotations(entgql.RelayConnection()),
		edge.To("region_services", RegionService.Type).Annotations(entgql.RelayConnection()),
		edge.To("kubernetes_clusters", KubernetesCluster.Type).Annotations(entgql.Skip(entgql.SkipAll)),
	}
}

// Annotations of the Flavor.
func (Flavor) Annotations() []schema.Annotation { return editable("flavors") }

// Hooks of the Flavor.
func (Flavor) Hooks() []ent.Hook {
	return []ent.Hook{
		validateField("prices_by_host_model", "pricesByHostModel", fieldtype.ValidatePrices),
	}
}
