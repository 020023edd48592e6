package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
)

// ServiceMesh is a mesh installation Kubernetes clusters can join.
type ServiceMesh struct {
	ent.Schema
}

// Mixin of the ServiceMesh.
func (ServiceMesh) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the ServiceMesh.
func (ServiceMesh) Fields() []ent.Field {
	return []ent.Field{
		uniqueSlugField(),
		descriptionField(),
		field.Enum("type").NamedValues(enumValues("Istio", "Linkerd", "Cilium", "Other")...).Default("ISTIO"),
		field.Enum("status").NamedValues(enumValues("Initializing", "Active", "Deleting", "Error")...).Default("INITIALIZING"),
	}
}

// Edges of the ServiceMesh.
func (ServiceMesh) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("kubernetes_clusters", KubernetesCluster.Type).Annotations(entgql.RelayConnection()),
	}
}

// Annotations of the ServiceMesh.
func (ServiceMesh) Annotations() []schema.Annotation { return editable("serviceMeshes") }
