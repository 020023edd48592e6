// Package fleet runs a simulated fleet: one in-process node agent (package nodeagent, the same
// code as cmd/nodeagent) per compute node, each over its own simulated hypervisor
// (hypervisor.Simulated) with configurable delays and failure rates. The server starts one
// with --demo so that demo nodes heartbeat and VMs reach ACTIVE on a laptop; development
// and benchmarks use it the same way.
//
// Each simulated agent authenticates like a real one, over HTTP with an agent token that can
// touch only its own node (tokens.go issues them; only their hashes are stored, the
// plaintext stays in memory).
package fleet
