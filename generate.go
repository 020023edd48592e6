// Package virtflow is the root of VirtFlow, a private-cloud resource management platform: one
// GraphQL graph from datacenter, floor, rack and host down to ports, cables, networks and IPs,
// tenants and quotas, and the virtual machines placed on the hardware. See README.md.
//
// This file is the one entry point of code generation: `go generate ./...` regenerates the ent
// client and the entgql schema (graph/ent.graphqls), then the gqlgen executable schema (and
// gqlgen's stock executor, graph/difftest/stockexec, which graph/difftest holds it to), then the
// node agent's typed GraphQL client (genqlient.yaml) and the automation client of the Terraform
// provider and the CLI (clients/apiclient/genqlient.yaml), which read the schema the steps before write.
package virtflow

//go:generate go run -mod=mod ./ent/entc.go
//go:generate go run -mod=mod ./graph/gqlgen.go
//go:generate go tool genqlient genqlient.yaml
//go:generate go tool genqlient clients/apiclient/genqlient.yaml
