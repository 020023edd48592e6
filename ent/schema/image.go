package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
)

// Image is a boot image: OS, minimum CPU and memory, where it comes from and its format.
type Image struct {
	ent.Schema
}

// Mixin of the Image.
func (Image) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the Image.
func (Image) Fields() []ent.Field {
	return []ent.Field{
		uniqueSlugField(),
		descriptionField(),
		field.Enum("os_type").NamedValues(enumValues("Linux", "Windows", "Other")...).Default("LINUX"),
		field.String("os_name").Optional().MaxLen(64),
		field.String("os_version").Optional().MaxLen(64),
		field.Int("min_vcpus").Default(1).Positive(),
		field.Int64("min_memory_mb").Default(512).Positive(),
		field.Int64("size_gb").Default(0).NonNegative(),
		field.String("source").NotEmpty().MaxLen(2048).Comment("URL or path the node agent fetches"),
		field.Enum("format").NamedValues(enumValues("Qcow2", "Raw", "Iso")...).Default("QCOW2"),
		field.String("checksum").Optional().MaxLen(128).Comment("sha256:<hex>"),
		field.Enum("status").NamedValues(enumValues("Active", "Deprecated")...).Default("ACTIVE"),
	}
}

// Edges of the Image.
func (Image) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("virtual_machines", VirtualMachine.Type).Annotations(entgql.RelayConnection()),
		edge.To("region_services", RegionService.Type).Annotations(entgql.RelayConnection()),
	}
}

// Annotations of the Image.
func (Image) Annotations() []schema.Annotation { return editable("images") }
