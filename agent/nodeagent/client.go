package nodeagent

import "github.com/virtflow/virtflow/clients/apiclient"

// Client is the agent's GraphQL client: apiclient.Client, the one client of the agent, the
// CLI and the Terraform provider. Its bearer token is the agent's; it implements
// graphql.Client for the operations genqlient generates from operations.graphql, sends the
// agent's trace context, and runs the assignment subscription (watch).
type Client = apiclient.Client

// Error is what a request that the API answered with errors returns (apiclient.Error).
type Error = apiclient.Error

// GraphQLError is one entry of a GraphQL response's errors (apiclient.GraphQLError).
type GraphQLError = apiclient.GraphQLError
