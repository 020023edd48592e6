// Package fabric builds the datacenter network fabric of seed 001 (SPEC.md §2) so operators do
// not cable hundreds of links by hand:
//
//	internet --- gateway-router --- floor-spine-router --- floor-leaf-router
//	         --- rack-spine-router --- rack-leaf-router --- server
//
// BuildRoot creates a datacenter's gateway routers (root-1-gateway-router01,
// root-2-gateway-router01) and floor-spine routers (root-1-floor-spine-router01..04), each spine
// cabled to every gateway. Build creates the fabric of one floor on top of it:
//
//   - floor-B-L-N-floor-leaf-router01..04 (role FLOOR_LEAF) and
//     floor-B-L-N-rack-spine-router01..08 (role RACK_SPINE), mounted in the floor's network rack;
//   - two rack-leaf routers per server rack, floor-B-L-N-rack-R-P-rack-leaf-router01/02 (role
//     RACK_LEAF), mounted in the highest free units of the rack itself;
//   - the links: every server's eth0 to its own rack's leaf01 and eth1 to the paired rack's
//     leaf02 (racks are paired 1-2, 3-4, … within a row, and each pair shares a RackZone), every
//     rack-leaf to two rack-spines, every rack-spine to every floor-leaf and every floor-leaf to
//     every floor-spine.
//
// Router ports are named swp1, swp2, … (Cumulus Linux style) and created as needed, continuing
// after the highest swpN a router already has; server ports eth0 and eth1 are created unless the
// server already has them uncabled. Every link is labelled "<hostA>:<portA> -- <hostB>:<portB>",
// A being the end nearer to the servers.
//
// Host names are unique across the whole installation while floor names are unique only in
// their datacenter, so every name can carry a HostPrefix (for example "tky1-dc1-") to keep two
// datacenters' floor-1-1-1 apart.
//
// Both functions validate their input first and return *apierr.Error values (VALIDATION naming
// the input field, NOT_FOUND, CONFLICT) with messages meant for operators, so they can back a
// GraphQL mutation as they are. They write with a handful of bulk statements and run in one
// transaction: the caller's when given a transactional client, their own otherwise.
package fabric
