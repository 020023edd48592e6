// Package diagram answers the dashboard's physical and logical views in a constant number of
// SQL statements each, whatever the size of the rack, floor or graph (issue 4):
//
//   - Rack: a rack's units top to bottom on both faces, every device with its node's state,
//     allocation, VM count, open alerts and maintainers; WriteSVG draws it for wikis and
//     tickets (served at GET /api/racks/{id}/elevation.svg by package httpapi).
//   - Floor and Datacenter: racks of a floor with occupancy, zones, capacity and alerts; floors
//     and clusters of a datacenter.
//   - Cluster: the cluster's nodes with the VMs placed on each (the "virtual rack").
//   - Network: hosts, switches, routers, VMs and networks around a host, network, port or VM,
//     with the cables between ports and the ports' network memberships; Trace: every hop from a
//     port up to the gateways.
//
// Each view reads with ent eager loading or one batched statement per kind of row (per level
// for the walks over the cabling), never one statement per row; each doc comment states its
// bound, and the package's tests count the statements at two sizes.
//
// Every function reads through the caller's ent client and context, so the privacy rules of
// package authz decide what the viewer sees; nothing here bypasses them. The record a view
// starts from is NOT_FOUND both when it does not exist and when the viewer may not read it.
// The types are bound directly to the GraphQL schema (graph/diagram.graphqls), so the
// resolvers stay one line each.
package diagram
