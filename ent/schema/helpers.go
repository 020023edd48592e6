// Package schema holds the ent schemas of VirtFlow's entity graph (SPEC.md §2): the physical
// topology, the compute fabric, people and tenancy, virtual resources and operations. One file per
// entity; shared fields live in mixins, and the helpers below keep GraphQL exposure uniform.
package schema

import (
	"regexp"
	"strings"
	"unicode"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"github.com/vektah/gqlparser/v2/ast"
)

// editable exposes an entity operators edit: a Relay connection query field named queryName
// with where filters and ordering, and createX/updateX mutations (deleteX is added by the
// schema hook in ent/entc.go).
func editable(queryName string) []schema.Annotation {
	return []schema.Annotation{
		entgql.QueryField(queryName),
		entgql.RelayConnection(),
		entgql.Mutations(entgql.MutationCreate(), entgql.MutationUpdate()),
	}
}

// readOnly exposes an entity that only the system writes (audit rows, usage records, events,
// assignments, tokens): a connection query field but no generic mutations.
func readOnly(queryName string) []schema.Annotation {
	return []schema.Annotation{
		entgql.QueryField(queryName),
		entgql.RelayConnection(),
	}
}

// enumValues turns Go-style names into NamedValues pairs whose stored and GraphQL value is
// SCREAMING_SNAKE_CASE: "NotReady" becomes the constant NotReady with value NOT_READY.
func enumValues(names ...string) []string {
	pairs := make([]string, 0, 2*len(names))
	for _, n := range names {
		pairs = append(pairs, n, screamingSnake(n))
	}
	return pairs
}

func screamingSnake(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		if i > 0 && unicode.IsUpper(r) && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1])) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

// slugPattern is the shape of machine-friendly names: regions, floors, racks, hosts, clusters.
var slugPattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9._-]{0,126}[a-z0-9])?$`)

// nameField is a required, non-empty, ordered "name" field of at most 128 characters.
func nameField() ent.Field {
	return field.String("name").
		NotEmpty().
		MaxLen(128).
		Annotations(entgql.OrderField("NAME"))
}

// slugField is a name restricted to lower-case letters, digits, dots, dashes and underscores,
// the way datacenter people name things (floor-1-1-1-rack-1-1-rack-leaf-router01).
func slugField() ent.Field {
	return field.String("name").
		NotEmpty().
		MaxLen(128).
		Match(slugPattern).
		Annotations(entgql.OrderField("NAME"))
}

// descriptionField is an optional free-text description.
func descriptionField() ent.Field {
	return field.Text("description").Optional().MaxLen(4096)
}

// maintainedBy are the responsibility edges (SPEC.md §2): the maintainers and maintainer groups
// responsible for a resource. The inverse edges live on Maintainer and MaintainerGroup under
// the name given.
func maintainedBy(inverse string) []ent.Edge {
	return []ent.Edge{
		edge.From("maintainers", Maintainer.Type).Ref(inverse).Annotations(entgql.RelayConnection()),
		edge.From("maintainer_groups", MaintainerGroup.Type).Ref(inverse).Annotations(entgql.RelayConnection()),
	}
}

// uniqueSlugField is a slugField unique across the whole table.
func uniqueSlugField() ent.Field {
	return field.String("name").
		NotEmpty().
		MaxLen(128).
		Match(slugPattern).
		Unique().
		Annotations(entgql.OrderField("NAME"))
}

// forceResolver makes gqlgen resolve a field through a resolver method rather than the
// model's struct field (`@goField(forceResolver: true)`), for fields whose value depends on
// who reads them (graph/ent.resolvers.go).
func forceResolver() entgql.Annotation {
	return entgql.Directives(entgql.NewDirective("goField",
		&ast.Argument{Name: "forceResolver", Value: &ast.Value{Raw: "true", Kind: ast.BooleanValue}}))
}
