package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/virtflow/virtflow/ent/schema/fieldtype"
)

// AuditLog is one mutation: who (actor and token), what (action, object type and id, before and
// after images with secrets redacted), when, and from where (request id, source address). It is
// written in the same transaction as the change and never updated. Actor and object are plain
// values, not edges, so the record outlives what it describes.
type AuditLog struct {
	ent.Schema
}

// Mixin of the AuditLog.
func (AuditLog) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the AuditLog.
func (AuditLog) Fields() []ent.Field {
	return []ent.Field{
		field.String("actor").NotEmpty().Immutable().Annotations(entgql.OrderField("ACTOR")),
		field.Int("actor_id").Optional().Immutable(),
		field.Int("token_id").Optional().Immutable(),
		field.String("action").NotEmpty().Immutable().Annotations(entgql.OrderField("ACTION")),
		field.String("object_type").Optional().Immutable().Annotations(entgql.OrderField("OBJECT_TYPE")),
		field.Int("object_id").Optional().Immutable(),
		field.Int("tenant_id").Optional().Immutable(),
		field.JSON("before", fieldtype.JSON{}).Optional().Immutable(),
		field.JSON("after", fieldtype.JSON{}).Optional().Immutable(),
		field.String("request_id").Optional().Immutable(),
		field.String("source_ip").Optional().Immutable(),
	}
}

// Indexes of the AuditLog.
func (AuditLog) Indexes() []ent.Index {
	return []ent.Index{index.Fields("actor"), index.Fields("object_type", "object_id"), index.Fields("tenant_id")}
}

// Annotations of the AuditLog.
func (AuditLog) Annotations() []schema.Annotation { return readOnly("auditLogs") }
