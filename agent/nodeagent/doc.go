// Package nodeagent is the VirtFlow node agent: the loops that run on every hypervisor host
// (cmd/nodeagent), and in-process for each node of a simulated fleet (package fleet).
//
// An [Agent] talks only to the GraphQL API, with an agent token that can touch nothing but
// its own node, and to the host through a [hypervisor.Hypervisor]:
//
//   - heartbeat.go: every HeartbeatInterval (10 s) it calls reportNodeStatus with the
//     host's capacity and health;
//   - resync.go: at start and every ResyncInterval (30 s) it reads all of its node's
//     assignments with their VMs, compares them with the domains the hypervisor lists, and
//     realizes every assignment that is not yet in its desired state (realize.go), reporting
//     the outcome with reportAssignmentStatus;
//   - spec.go turns a VM (flavor, image, ports) into a domain spec.
//
// The agent keeps no database. Domains carry their VM id and assignment generation in their
// metadata, so after a restart the agent rebuilds its view from the hypervisor and the API and
// does no work twice: an assignment whose domain is already in the desired state at the
// assignment's generation is only reported (when the API does not know yet), never redone.
//
//   - watch.go: it subscribes to assignmentChanged over graphql-transport-ws (coder/websocket)
//     and runs a resync as soon as one of its assignments changes; the periodic resync is
//     the safety net when the subscription is down.
//
//   - routed.go: with NetworkMode NetworkRouted (--network-mode=routed) every VM address gets a
//     namespace and a /32 on the node (package vmnet), its ACL (SecurityRule) applied with
//     nftables there, and the /32 announced to the node's BGP peers (package bgp; peers from
//     ComputeNode.bgp) while the VM runs, withdrawn before it stops, moves or goes; the
//     metadata service answers the node's VMs on 169.254.1.2. Announcer lets other parts of
//     the agent (load balancers) announce their prefixes through the same speaker.
//
// Its GraphQL documents are in operations.graphql; genqlient generates typed functions, the
// types they read and send (Assignment, VirtualMachine, NodeStatusInput, …) and the schema's
// enums (AssignmentStatus, AssignmentDesiredState, …, which the agent compares and sends
// instead of strings) from the server's schema into operations_gen.go. They go through
// [Client], which is apiclient.Client: the agent, the CLI and the Terraform provider share
// one transport (bearer token, trace context, the graphql-transport-ws subscription).
package nodeagent
