// Package diagram answers the dashboard's physical and logical views in a constant number of
// SQL statements each, whatever the size of the rack, floor or graph (issue 4):
//
//   - RackElevation: a rack's units top to bottom on both faces, every device with its node's
//     state, allocation, VM count, open alerts and maintainers; SVG renders it for wikis.
//   - FloorView and DatacenterView: racks of a floor with occupancy, zones, capacity and worst
//     alert; floors and clusters of a datacenter.
//   - ClusterView: the cluster's nodes with the VMs placed on each (the "virtual rack").
//   - NetworkDiagram: hosts, switches, routers, VMs and networks around a host, network or port,
//     with the links between ports; TracePath: every hop from a port up to the gateways.
//
// Every function reads through the caller's ent client and context, so the privacy rules of
// package authz decide what the viewer sees; nothing here bypasses them. The types are bound
// directly to the GraphQL schema (graph/diagram.graphqls), so the resolvers stay one line each.
package diagram
