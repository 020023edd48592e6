// Package loadtest is the load harness of cmd/loadtest: it drives a running server from the
// outside, through its public GraphQL API only (POST /query with a bearer token), and reports
// what it measured together with the machine it measured on.
//
// Scenarios: Creates (createVirtualMachine at N clients, with an optional pgbench replay of
// a create's writes beside it), Reads (racks(first: 100), floorView and rackElevation at N
// clients) and Active (K VMs created, timed until every one is ACTIVE). Every report holds a
// Machine: CPU count, /proc/loadavg before and after, Go version, server URL and the server's
// /readyz answer.
package loadtest
