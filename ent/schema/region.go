package schema

import (
	"regexp"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
)

// Region is the unit users choose (e.g. tokyo1) and that is opened or closed as a whole.
type Region struct {
	ent.Schema
}

// Mixin of the Region.
func (Region) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the Region.
func (Region) Fields() []ent.Field {
	return []ent.Field{
		uniqueSlugField(),
		descriptionField(),
		field.Enum("status").NamedValues(enumValues("Open", "Closed")...).Default("OPEN").
			Annotations(entgql.OrderField("STATUS")),
		field.String("backup_target").Optional().MaxLen(1024).Match(backupTargetPattern).
			Annotations(entgql.Skip(entgql.SkipWhereInput), forceResolver()).
			Comment("null unless the viewer may edit regions (operators, admins) or is a node's agent; the directory backups of the region's VMs are written to: an absolute path every compute node of the region mounts (a local directory or an NFS export); empty: the region takes no backups"),
	}
}

// Edges of the Region.
func (Region) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("availability_zones", AvailabilityZone.Type).Annotations(entgql.RelayConnection()),
		edge.To("datacenters", Datacenter.Type).Annotations(entgql.RelayConnection()),
		edge.To("clusters", Cluster.Type).Annotations(entgql.RelayConnection()),
		edge.To("region_services", RegionService.Type).Annotations(entgql.RelayConnection()),
		edge.To("kubernetes_clusters", KubernetesCluster.Type).Annotations(entgql.RelayConnection()),
		edge.To("virtual_machines", VirtualMachine.Type).Annotations(entgql.RelayConnection()),
		edge.To("backups", Backup.Type).Annotations(entgql.RelayConnection(), entgql.Skip(entgql.SkipMutationCreateInput|entgql.SkipMutationUpdateInput)),
	}
}

// Annotations of the Region.
func (Region) Annotations() []schema.Annotation { return editable("regions") }

// backupTargetPattern is an absolute directory path of plain path characters (it becomes a
// libvirt storage pool's path on every node of the region).
var backupTargetPattern = regexp.MustCompile(`^/[A-Za-z0-9_./-]*$`)
