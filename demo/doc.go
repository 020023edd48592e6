// Package demo loads a demo installation into an empty VirtFlow database: two regions
// (tokyo1, osaka1) with three availability zones each, one datacenter per region, three floors
// of server racks fully cabled with the seed-001 network fabric (package fabric), servers with
// realistic hardware and their compute nodes in clusters, management, VM and storage networks
// with addresses, host groups, tenants with quotas and members, maintainers and maintainer
// groups responsible for racks, hosts and clusters, flavors, images, a few running VMs per tenant
// (placed by package placement, so node allocation and quota usage add up), and a handful of
// operational records
// (event rules, events, alerts, a notice, a maintenance, a service mesh).
//
// It is meant for looking at the dashboard's rack and network diagrams and for benchmarks. Load
// runs in one transaction (all or nothing), writes with bulk inserts (about 150 statements of
// its own for some four thousand rows, plus the per-row checks of the ent hooks and a dozen
// statements to place each VM) and is idempotent: when the region tokyo1 exists it writes
// nothing and reports the current row counts.
//
// Host names are unique across the installation while floor names repeat between datacenters
// (both have a floor-1-1-1), so every host name starts with its datacenter's name:
// tky1-dc1-floor-1-1-1-rack-1-1-server01, tky1-dc1-root-1-gateway-router01.
package demo
