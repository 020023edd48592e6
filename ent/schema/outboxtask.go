package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// OutboxTask is a unit of asynchronous work accepted by a mutation: written in the mutation's
// own transaction, then moved to Redis (Asynq) by the outbox relay, so work the API accepted
// is never lost when Redis is down or a process dies between commit and enqueue. It is an
// internal table, not part of the GraphQL API; no role may touch it, so only the system
// (authz.SystemContext) writes and reads it.
type OutboxTask struct {
	ent.Schema
}

// Mixin of the OutboxTask.
func (OutboxTask) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the OutboxTask.
func (OutboxTask) Fields() []ent.Field {
	return []ent.Field{
		field.String("kind").NotEmpty().MaxLen(64).Comment("Asynq task type, e.g. vm:create"),
		field.String("queue").NotEmpty().MaxLen(128).Default("default").Comment("Asynq queue, one per region"),
		field.Bytes("payload").Optional(),
		field.String("dedup_key").Optional().Nillable().Unique().MaxLen(256).
			Comment("at most one task per key, e.g. vm:create:42:gen3; also the Asynq task id"),
		field.Time("available_at").Default(time.Now).Comment("not relayed before this time"),
		field.Time("dispatched_at").Optional().Nillable().Comment("set once the task is in Redis"),
		field.Time("acked_at").Optional().Nillable().
			Comment("set once a worker finished the task (done, or failed for good); until then the relay keeps it in Redis"),
		field.Int("attempts").Default(0).NonNegative().Comment("relay attempts"),
		field.String("last_error").Optional().MaxLen(1024),
		field.JSON("headers", map[string]string{}).Optional().
			Comment("Asynq task headers: the W3C trace context of the request that recorded the task, so its trace continues in the worker"),
	}
}

// Indexes of the OutboxTask.
func (OutboxTask) Indexes() []ent.Index {
	return []ent.Index{index.Fields("dispatched_at", "available_at")}
}

// Annotations of the OutboxTask.
func (OutboxTask) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll)}
}
