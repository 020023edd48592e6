package schema

import (
	"net/url"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"

	"github.com/virtflow/virtflow/ent/schema/fieldtype"
)

// EventRule decides what happens to events, in priority order (lowest first): FILTER drops
// matching events before they are stored, SILENCE stores and flags them with no action,
// AGGREGATE groups them over a window before acting, ACTION creates or resolves an alert or
// calls an HTTP hook.
type EventRule struct {
	ent.Schema
}

// Mixin of the EventRule.
func (EventRule) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}, AuthzMixin{}} }

// Fields of the EventRule.
func (EventRule) Fields() []ent.Field {
	return []ent.Field{
		uniqueSlugField(),
		descriptionField(),
		field.Enum("kind").NamedValues(enumValues("Filter", "Silence", "Aggregate", "Action")...),
		field.Int("priority").Default(100).Range(0, 10000).Annotations(entgql.OrderField("PRIORITY")),
		field.String("check_name_pattern").Default("*").MaxLen(256).Comment("glob on the event's check name"),
		field.Enum("status_match").NamedValues(enumValues("Success", "Warning", "Critical")...).Optional().Nillable(),
		field.Enum("action").NamedValues(enumValues("CreateAlert", "ResolveAlert", "CallHook")...).Optional().Nillable(),
		field.Enum("alert_severity").NamedValues(enumValues("Fatal", "Critical", "Warning")...).Optional().Nillable(),
		field.String("hook_url").Optional().MaxLen(2048).Validate(validHTTPURL),
		field.Int("aggregate_window_seconds").Default(0).NonNegative().
			Comment("Aggregate: group wait, how long the first event of a group waits for the others"),
		field.Bool("enabled").Default(true),
		field.String("node_pattern").Default("*").MaxLen(256).Comment("glob on the event's node name"),
		field.String("host_pattern").Default("*").MaxLen(256).Comment("glob on the event's host name (or its node's host)"),
		field.String("rack_pattern").Default("*").MaxLen(256).Comment("glob on the rack of the event's host"),
		field.String("cluster_pattern").Default("*").MaxLen(256).Comment("glob on the cluster of the event's node"),
		field.JSON("label_matchers", fieldtype.Labels{}).Optional().
			Comment("every label must equal (value * matches any value) the event's or its node's label"),
		field.Int("occurrences").Default(1).Range(1, 10000).
			Comment("consecutive events of the same status before the rule acts (flapping suppression)"),
		field.Int("reissue_seconds").Default(0).NonNegative().
			Comment("once the rule acted for a fingerprint, repeats are ignored for this long"),
		field.Strings("group_by").Optional().
			Comment("Aggregate: event attributes that make a group (check, status, node, host, rack, cluster, label:<key>)"),
		field.Int("group_interval_seconds").Default(300).NonNegative().
			Comment("Aggregate: minimum time between two notifications of one group"),
		field.String("hook_secret").Optional().Sensitive().MaxLen(512).
			Annotations(entgql.Skip(entgql.SkipType | entgql.SkipWhereInput | entgql.SkipOrderField)).
			Comment("HMAC-SHA256 key of hook bodies (X-VirtFlow-Signature); write-only; stored sealed (internal/secrets), at most 256 bytes in clear"),
	}
}

// Edges of the EventRule.
func (EventRule) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("deliveries", HookDelivery.Type).Annotations(entgql.RelayConnection(), entgql.Skip(entgql.SkipMutationCreateInput|entgql.SkipMutationUpdateInput)),
	}
}

// Annotations of the EventRule.
func (EventRule) Annotations() []schema.Annotation { return editable("eventRules") }

// validHTTPURL accepts an absolute http or https URL.
func validHTTPURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errInvalidURL
	}
	return nil
}
