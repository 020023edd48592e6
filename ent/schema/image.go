package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
)

// Image is a boot image: OS, minimum CPU and memory, where its bytes come from (an http(s)
// URL the server fetches, or an upload through PUT /images/{id}/data), their format, size and
// sha256, and a status that says whether the server holds them (package imagestore):
// PENDING (waiting for bytes) → DOWNLOADING (bytes arriving) → ACTIVE (stored and verified),
// or ERROR with the reason; DEPRECATED images keep their bytes but are not offered for new VMs.
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
		field.String("source").NotEmpty().MaxLen(2048).
			Comment(`http(s) URL the server fetches the bytes from, "upload" for bytes sent to PUT /images/{id}/data, or vm:<id> for an image made from that VM's root disk (createImageFromVirtualMachine), whose bytes the VM's node's agent uploads`),
		field.Enum("format").NamedValues(enumValues("Qcow2", "Raw", "Iso")...).Default("QCOW2"),
		field.String("checksum").Optional().MaxLen(128).
			Comment("sha256:<hex>; when given, the bytes must match it on arrival, else it is set from them"),
		field.Enum("status").NamedValues(enumValues("Pending", "Downloading", "Active", "Error", "Deprecated")...).
			Default("PENDING").Annotations(entgql.Skip(entgql.SkipMutationCreateInput)),
		field.String("status_reason").Optional().MaxLen(1024).
			Annotations(entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)).
			Comment("why the image is in its status (ERROR: what went wrong)"),
		field.Int64("size_bytes").Default(0).NonNegative().
			Annotations(entgql.Skip(entgql.SkipMutationCreateInput | entgql.SkipMutationUpdateInput)).
			Comment("size of the stored bytes; 0 until the image is ACTIVE"),
		// The upload session: one upload at a time per image, whichever server receives it.
		field.String("upload_id").Optional().Nillable().MaxLen(64).Sensitive().
			Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("the upload in progress (Upload-ID header); only its client sends more bytes"),
		field.Time("upload_expires_at").Optional().Nillable().
			Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("the upload in progress lapses when its client sends nothing until then"),
	}
}

// Edges of the Image.
func (Image) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("virtual_machines", VirtualMachine.Type).Annotations(entgql.RelayConnection()),
		edge.To("region_services", RegionService.Type).Annotations(entgql.RelayConnection()),
		edge.To("kubernetes_clusters", KubernetesCluster.Type).Annotations(entgql.Skip(entgql.SkipAll)),
		edge.To("assignments", Assignment.Type).Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("the work of the node that makes the image from its source VM's disk (source vm:<id>)"),
	}
}

// Annotations of the Image.
func (Image) Annotations() []schema.Annotation { return editable("images") }
