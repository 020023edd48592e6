package schema

import (
	"net/url"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
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
		field.Int("aggregate_window_seconds").Default(0).NonNegative(),
		field.Bool("enabled").Default(true),
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
