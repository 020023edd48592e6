//go:build ignore

// Command entc generates the ent client, the GraphQL schema of the entity graph
// (graph/ent.graphqls) and the CRUD mutation fields over it. Run it through `go generate ./...`
// from the repository root (see generate.go).
package main

import (
	"fmt"
	"log"
	"sort"
	"strings"

	"entgo.io/contrib/entgql"
	"entgo.io/ent/entc"
	"entgo.io/ent/entc/gen"
	"github.com/vektah/gqlparser/v2/ast"
)

func main() {
	ex, err := entgql.NewExtension(
		entgql.WithConfigPath("./gqlgen.yml"),
		entgql.WithSchemaGenerator(),
		entgql.WithSchemaPath("./graph/ent.graphqls"),
		entgql.WithWhereInputs(true),
		entgql.WithSchemaHook(crudMutations, describeSchema),
	)
	if err != nil {
		log.Fatalf("creating entgql extension: %v", err)
	}
	err = entc.Generate("./ent/schema", &gen.Config{
		Target:  "./ent",
		Package: "github.com/virtflow/virtflow/ent",
		Features: []gen.Feature{
			gen.FeatureGlobalID,
			gen.FeatureLock,
			gen.FeatureUpsert,
			gen.FeatureModifier,
			gen.FeatureVersionedMigration,
			gen.FeatureIntercept,
			gen.FeaturePrivacy,
			gen.FeatureEntQL,
			gen.FeatureExecQuery, // Client.ExecContext: ipam's per-scope advisory lock
		},
	}, entc.Extensions(ex), entc.TemplateDir("./ent/template"))
	if err != nil {
		log.Fatalf("running ent codegen: %v", err)
	}
}

// crudMutations adds createX, updateX and deleteX to the Mutation type for every entity whose
// schema asks for create/update inputs (entgql.Mutations), following entgql's naming so outside
// clients can rely on it: createRack(input:), updateRack(id:, input:), deleteRack(id:).
func crudMutations(g *gen.Graph, s *ast.Schema) error {
	mutation := s.Types["Mutation"]
	if mutation == nil {
		mutation = &ast.Definition{Kind: ast.Object, Name: "Mutation"}
		s.Types["Mutation"] = mutation
		s.Mutation = mutation
	}
	var names []string
	for _, n := range g.Nodes {
		if s.Types["Create"+n.Name+"Input"] != nil {
			names = append(names, n.Name)
		}
	}
	sort.Strings(names)
	nonNull := func(name string) *ast.Type { return ast.NonNullNamedType(name, nil) }
	idArg := &ast.ArgumentDefinition{Name: "id", Type: nonNull("ID")}
	for _, name := range names {
		deleteArgs := ast.ArgumentDefinitionList{idArg}
		deleteDesc := fmt.Sprintf("Deletes the %s with the given id and returns the id. Fails with CONFLICT, "+
			"naming them, while other records still point at it.", name)
		if name == "VirtualMachine" {
			// Operators free the capacity of a VM whose node is gone without waiting for its agent.
			deleteArgs = append(deleteArgs, &ast.ArgumentDefinition{Name: "force", Type: ast.NamedType("Boolean", nil),
				DefaultValue: &ast.Value{Kind: ast.BooleanValue, Raw: "false"},
				Description: "operators only: delete at once, freeing its node capacity and quota, without waiting for the " +
					"node's agent; the agent removes the leftover domain when it next resyncs"})
			deleteDesc = "Deletes the VirtualMachine with the given id and returns the id: at once when it was never " +
				"created on a node or with force, otherwise once its node's agent removed it (DELETING until then)."
		}
		if name == "Volume" {
			deleteDesc = "Deletes the Volume with the given id, with its data, and returns the id: at once when it was " +
				"never created on a node, otherwise once its node's agent deleted it (DELETING until then). An attached " +
				"volume is detached first (detachVolume): deleting it is VALIDATION."
		}
		mutation.Fields = append(mutation.Fields,
			&ast.FieldDefinition{
				Name:        "create" + name,
				Description: fmt.Sprintf("Creates a %s. Validation errors name the offending field.", name),
				Arguments:   ast.ArgumentDefinitionList{{Name: "input", Type: nonNull("Create" + name + "Input")}},
				Type:        nonNull(name),
			},
			&ast.FieldDefinition{
				Name:        "update" + name,
				Description: fmt.Sprintf("Updates the %s with the given id; fields left out keep their value.", name),
				Arguments:   ast.ArgumentDefinitionList{idArg, {Name: "input", Type: nonNull("Update" + name + "Input")}},
				Type:        nonNull(name),
			},
			&ast.FieldDefinition{
				Name:        "delete" + name,
				Description: deleteDesc,
				Arguments:   deleteArgs,
				Type:        nonNull("ID"),
			},
		)
	}
	return nil
}

// describeSchema gives every field, enum value and input field of the generated schema a
// description, so that the API documents itself (graph's TestSchemaDescriptions checks it):
// an ent field's or edge's .Comment when it has one, else one said from its place — what a
// where-input predicate tests, what an order field sorts by, what an input field sets, clears,
// adds or removes, what a connection's fields are. It runs after crudMutations and never
// replaces a description that is there.
func describeSchema(g *gen.Graph, s *ast.Schema) error {
	nodes := map[string]*gen.Type{}
	for _, n := range g.Nodes {
		nodes[n.Name] = n
	}
	norm := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", "")) }
	// what says a type's field or edge in words, from ent.
	fieldDesc := func(n *gen.Type, gqlName string) string {
		switch gqlName {
		case "id":
			return fmt.Sprintf("The %s's global id.", words(n.Name))
		case "createdAt":
			return fmt.Sprintf("When the %s was created.", words(n.Name))
		case "updatedAt":
			return fmt.Sprintf("When the %s was last changed.", words(n.Name))
		}
		want := norm(gqlName)
		for _, f := range n.Fields {
			if norm(f.Name) == want {
				if c := f.Comment(); c != "" {
					return c
				}
				if base, ok := strings.CutSuffix(f.Name, "_at"); ok {
					return fmt.Sprintf("The %s's %s time.", words(n.Name), words(base))
				}
				return fmt.Sprintf("The %s's %s.", words(n.Name), words(f.Name))
			}
		}
		for _, e := range n.Edges {
			if norm(e.Name) == want {
				if c := e.Comment(); c != "" {
					return c
				}
				if e.Unique {
					return fmt.Sprintf("The %s of the %s (a %s).", words(e.Name), words(n.Name), e.Type.Name)
				}
				return fmt.Sprintf("The %s of the %s, as a connection of %s.", words(e.Name), words(n.Name), e.Type.Name)
			}
		}
		return ""
	}
	set := func(d *string, text string) {
		if strings.TrimSpace(*d) == "" && text != "" {
			*d = text
		}
	}
	for name, def := range s.Types {
		switch {
		case def.Kind == ast.Object && nodes[name] != nil:
			for _, f := range def.Fields {
				set(&f.Description, fieldDesc(nodes[name], f.Name))
			}
		case def.Kind == ast.Object && strings.HasSuffix(name, "Connection"):
			what := strings.TrimSuffix(name, "Connection")
			for _, f := range def.Fields {
				set(&f.Description, map[string]string{
					"edges":      "The edges of this page, one per " + what + ".",
					"pageInfo":   "Information to continue paginating.",
					"totalCount": "How many " + what + " objects match, over every page.",
				}[f.Name])
			}
		case def.Kind == ast.Object && strings.HasSuffix(name, "Edge"):
			for _, f := range def.Fields {
				set(&f.Description, map[string]string{
					"node":   "The " + strings.TrimSuffix(name, "Edge") + " at the end of the edge.",
					"cursor": "A cursor for use in pagination (after, before).",
				}[f.Name])
			}
		case def.Kind == ast.Enum && strings.HasSuffix(name, "OrderField"):
			for _, v := range def.EnumValues {
				set(&v.Description, "Order by "+strings.ToLower(strings.ReplaceAll(v.Name, "_", " "))+".")
			}
		case def.Kind == ast.Enum:
			for _, v := range def.EnumValues {
				set(&v.Description, enumValueDesc(name, v.Name))
			}
		case def.Kind == ast.InputObject && strings.HasSuffix(name, "WhereInput"):
			n := nodes[strings.TrimSuffix(name, "WhereInput")]
			for _, f := range def.Fields {
				set(&f.Description, whereDesc(n, f.Name))
			}
		case def.Kind == ast.InputObject && strings.HasSuffix(name, "Order"):
			what := strings.TrimSuffix(name, "Order")
			for _, f := range def.Fields {
				set(&f.Description, map[string]string{
					"direction": "The ordering direction (ASC, the default, or DESC).",
					"field":     "The field " + what + " objects are ordered by.",
				}[f.Name])
			}
		case def.Kind == ast.InputObject && (strings.HasPrefix(name, "Create") || strings.HasPrefix(name, "Update")) && strings.HasSuffix(name, "Input"):
			n := nodes[strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(name, "Create"), "Update"), "Input")]
			if n == nil {
				continue
			}
			for _, f := range def.Fields {
				set(&f.Description, inputDesc(n, f.Name, fieldDesc))
			}
		}
	}
	if q := s.Types["Query"]; q != nil {
		for _, f := range q.Fields {
			if t := strings.TrimSuffix(f.Type.Name(), "Connection"); t != f.Type.Name() {
				set(&f.Description, fmt.Sprintf("Lists %s objects the viewer may read, as a Relay connection: filtered by where, sorted by orderBy, paginated by first/after or last/before.", t))
			}
		}
	}
	return nil
}

// enumValueDesc says an enum value of a generated enum (RackStatus.EMPTY_SPARE: "The rack
// status EMPTY_SPARE: empty spare.").
func enumValueDesc(enum, value string) string {
	return fmt.Sprintf("%s %s: %s.", upper(words(enum)), value, strings.ToLower(strings.ReplaceAll(value, "_", " ")))
}

// wherePredicates are the suffixes entgql gives a field's predicates, longest first, and what
// each tests.
var wherePredicates = []struct{ suffix, says string }{
	{"ContainsFold", "contains the value, ignoring case"},
	{"EqualFold", "equals the value, ignoring case"},
	{"HasPrefix", "starts with the value"},
	{"HasSuffix", "ends with the value"},
	{"Contains", "contains the value"},
	{"NotNil", "is set"},
	{"IsNil", "is not set"},
	{"NotIn", "is none of the values"},
	{"NEQ", "differs from the value"},
	{"GTE", "is at least the value"},
	{"LTE", "is at most the value"},
	{"GT", "is greater than the value"},
	{"LT", "is less than the value"},
	{"In", "is one of the values"},
}

// whereDesc says what a where-input field tests.
func whereDesc(n *gen.Type, field string) string {
	what := "object"
	if n != nil {
		what = words(n.Name)
	}
	switch field {
	case "not":
		return "Matches a " + what + " the given filter does not match."
	case "and":
		return "Matches a " + what + " every given filter matches."
	case "or":
		return "Matches a " + what + " at least one given filter matches."
	}
	if strings.HasPrefix(field, "has") && len(field) > 3 && field[3] >= 'A' && field[3] <= 'Z' {
		if edge, ok := strings.CutSuffix(field[3:], "With"); ok {
			return fmt.Sprintf("The %s has %s matching at least one of the given filters.", what, words(edge))
		}
		return fmt.Sprintf("The %s has at least one %s.", what, words(field[3:]))
	}
	for _, p := range wherePredicates {
		if base, ok := strings.CutSuffix(field, p.suffix); ok && base != "" {
			return fmt.Sprintf("The %s's %s %s.", what, words(base), p.says)
		}
	}
	return fmt.Sprintf("The %s's %s equals the value.", what, words(field))
}

// inputDesc says what a create or update input field sets.
func inputDesc(n *gen.Type, field string, fieldDesc func(*gen.Type, string) string) string {
	if d := fieldDesc(n, field); d != "" {
		return d
	}
	what := words(n.Name)
	for _, p := range []struct{ prefix, says string }{
		{"clear", "Clears the %s's %s (unset, or no edges)."},
		{"append", "Appends to the %s's %s."},
	} {
		if base, ok := strings.CutPrefix(field, p.prefix); ok && base != "" && base[0] >= 'A' && base[0] <= 'Z' {
			return fmt.Sprintf(p.says, what, words(base))
		}
	}
	for _, p := range []struct{ prefix, says string }{
		{"add", "Ids of %s to add to the %s's %s."},
		{"remove", "Ids of %s to remove from the %s's %s."},
	} {
		if base, ok := strings.CutPrefix(field, p.prefix); ok && strings.HasSuffix(base, "IDs") {
			e := words(strings.TrimSuffix(base, "IDs"))
			return fmt.Sprintf(p.says, e, what, e)
		}
	}
	if base, ok := strings.CutSuffix(field, "IDs"); ok {
		return fmt.Sprintf("Ids of the %s's %s.", what, words(base))
	}
	if base, ok := strings.CutSuffix(field, "ID"); ok {
		if d := fieldDesc(n, base); d != "" {
			return d + " (its id)"
		}
		return fmt.Sprintf("Id of the %s's %s.", what, words(base))
	}
	return fmt.Sprintf("The %s's %s.", what, words(field))
}

// words turns a Go, GraphQL or snake_case name into lower-case words, keeping acronyms:
// "VirtualMachine" → "virtual machine", "memory_mb" → "memory mb", "cidrIPv6" stays readable.
func words(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case r == '_':
			b.WriteByte(' ')
			continue
		case i > 0 && r >= 'A' && r <= 'Z':
			prevLower := rs[i-1] >= 'a' && rs[i-1] <= 'z'
			nextLower := i+1 < len(rs) && rs[i+1] >= 'a' && rs[i+1] <= 'z'
			prevUpper := rs[i-1] >= 'A' && rs[i-1] <= 'Z'
			if prevLower || (prevUpper && nextLower) {
				b.WriteByte(' ')
			}
		}
		b.WriteRune(r)
	}
	out := strings.Fields(b.String())
	for i, w := range out {
		if strings.ToUpper(w) != w || len(w) == 1 {
			out[i] = strings.ToLower(w)
		}
	}
	return strings.Join(out, " ")
}

// upper capitalizes the first letter.
func upper(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
