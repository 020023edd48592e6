//go:build ignore

// Command gqlgen generates the executable schema (graph/generated) from gqlgen.yml, as
// `gqlgen generate` does, with one plugin: serialModelFields. Run it through `go generate ./...`
// from the repository root (see generate.go).
package main

import (
	"log"

	"github.com/99designs/gqlgen/api"
	"github.com/99designs/gqlgen/codegen"
	"github.com/99designs/gqlgen/codegen/config"
)

func main() {
	cfg, err := config.LoadConfig("gqlgen.yml")
	if err != nil {
		log.Fatalf("loading gqlgen.yml: %v", err)
	}
	if err := api.Generate(cfg, api.AddPlugin(serialModelFields{})); err != nil {
		log.Fatalf("running gqlgen: %v", err)
	}
}

// serialModelFields resolves, without a goroutine each, the fields of the object types that
// have no resolver of their own: their fields are struct fields or methods of the ent models,
// and those methods return edges ent already loaded (entgql collects the selected edges into
// the list's query) or, for an edge not loaded, run one query. gqlgen starts a goroutine for
// every field backed by a method taking a context, which for a list of 1,000 hosts with eight
// edges is 8,000 goroutines, each growing its stack, to read slices already in memory.
// Objects with resolvers (custom fields that may do real work) keep gqlgen's concurrency, as
// do the root types (Mutation is serial already).
type serialModelFields struct{}

func (serialModelFields) Name() string { return "serialmodelfields" }

func (serialModelFields) GenerateCode(data *codegen.Data) error {
	for _, o := range data.Objects {
		if o.Root {
			continue
		}
		resolvers := false
		for _, f := range o.Fields {
			resolvers = resolvers || f.IsResolver
		}
		if !resolvers {
			o.DisableConcurrency = true
		}
	}
	return nil
}
