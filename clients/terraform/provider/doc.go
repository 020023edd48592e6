// Package provider is VirtFlow's Terraform provider (hashicorp/terraform-plugin-framework),
// served by cmd/terraform-provider-virtflow. It talks to the GraphQL API (/query) with an API
// token, through apiclient's operations typed from the schema.
//
// Every resource follows one shape (crud in resource.go): create with the API's mutation
// and keep what it answers, read by id (an object that is gone leaves the state), update
// what can change in place and replace the rest, delete, and import by id. API errors
// become diagnostics carrying extensions.code, attached to the attribute their
// extensions.field names. IP addresses are taken with allocateIPAddress, which the server
// serializes, so parallel applies never hand out one address twice. A VM's create waits
// until it is ACTIVE (ERROR fails with its reason) and its delete until it is gone, each
// within its timeouts.
package provider
