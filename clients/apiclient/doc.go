// Package apiclient is VirtFlow's GraphQL client for automation: the Terraform provider
// (clients/terraform/provider) and the command-line tool (package cli, cmd/virtflow) use it.
//
// The operations they send are in operations.graphql; genqlient generates typed Go
// functions for them (operations_gen.go) from the server's schema (graph/*.graphqls), so a
// schema change breaks their build rather than a user's apply. [Client] carries the API
// token over HTTP and turns GraphQL errors into an [*Error] whose code (extensions.code) and
// field callers can test; [Client.Subscribe] runs a subscription over the
// graphql-transport-ws websocket protocol the server speaks.
package apiclient
