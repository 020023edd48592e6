//go:build ignore

// Command entc generates the ent client, the GraphQL schema of the entity graph
// (graph/ent.graphqls) and the CRUD mutation fields over it. Run it through `go generate ./...`
// from the repository root (see generate.go).
package main

import (
	"fmt"
	"log"
	"sort"

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
		entgql.WithSchemaHook(crudMutations),
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
