package graph_test

import (
	"sort"
	"strings"
	"testing"
)

// introspectedSchema is what the served schema says of its types through introspection.
type introspectedSchema struct {
	Schema struct {
		QueryType        struct{ Name string }
		MutationType     *struct{ Name string }
		SubscriptionType *struct{ Name string }
		Types            []struct {
			Name        string
			Kind        string
			Fields      []introspectedItem
			InputFields []introspectedItem
			EnumValues  []introspectedItem
		}
	} `json:"__schema"`
}

type introspectedItem struct {
	Name        string
	Description *string
}

const descriptionsQuery = `{ __schema {
  queryType { name } mutationType { name } subscriptionType { name }
  types { name kind
    fields(includeDeprecated: true) { name description }
    inputFields { name description }
    enumValues(includeDeprecated: true) { name description } } } }`

// TestSchemaDescriptions: through the served handler's introspection, every object and
// interface field, root field (Query, Mutation, Subscription), enum value and input field
// has a description, so that the API documents itself (GraphiQL, the dashboard's field
// help, the CLI's describe). entgql's generated types get theirs from ent's .Comment or,
// where an ent field has none, from ent/entc.go's describeSchema; the hand-written
// graph/*.graphqls carry their own. Introspection's own types (__*) are gqlgen's and left
// out. There is no exemption list: everything is reachable. The coverage of each kind is
// logged.
func TestSchemaDescriptions(t *testing.T) {
	env, _ := newEnv(t)
	var s introspectedSchema
	env.MustDo(t, descriptionsQuery, nil, &s)
	roots := map[string]bool{s.Schema.QueryType.Name: true}
	if s.Schema.MutationType != nil {
		roots[s.Schema.MutationType.Name] = true
	}
	if s.Schema.SubscriptionType != nil {
		roots[s.Schema.SubscriptionType.Name] = true
	}
	kinds := []string{"object fields", "root fields", "enum values", "input fields"}
	missing := map[string][]string{}
	total := map[string]int{}
	check := func(kind, key string, d *string) {
		total[kind]++
		if d == nil || strings.TrimSpace(*d) == "" {
			missing[kind] = append(missing[kind], key)
		}
	}
	for _, typ := range s.Schema.Types {
		if strings.HasPrefix(typ.Name, "__") {
			continue
		}
		for _, f := range typ.Fields {
			kind := "object fields"
			if roots[typ.Name] {
				kind = "root fields"
			}
			check(kind, typ.Name+"."+f.Name, f.Description)
		}
		for _, f := range typ.InputFields {
			check("input fields", typ.Name+"."+f.Name, f.Description)
		}
		for _, v := range typ.EnumValues {
			check("enum values", typ.Name+"."+v.Name, v.Description)
		}
	}
	if total["root fields"] == 0 || total["object fields"] == 0 || total["enum values"] == 0 || total["input fields"] == 0 {
		t.Fatalf("introspection found too little: %v", total)
	}
	for _, kind := range kinds {
		m := missing[kind]
		sort.Strings(m)
		t.Logf("%s: %d of %d described", kind, total[kind]-len(m), total[kind])
		if len(m) > 0 {
			if len(m) > 50 {
				m = append(m[:50], "…")
			}
			t.Errorf("%d %s have no description:\n  %s", len(missing[kind]), kind, strings.Join(m, "\n  "))
		}
	}
}
