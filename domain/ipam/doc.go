// Package ipam manages IP address space.
//
// It holds the rules ent hooks enforce on every write (hooks.go: a gateway inside its prefix,
// an address inside its network and not its network or broadcast address; scope.go: a prefix
// never overlapping another of its routing scope, Network.vrf; release.go: an address a VM
// uses is not deleted from under it; rangehook.go: reserved ranges inside their prefix and
// never overlapping), and the allocator behind the
// allocateIPAddress and releaseIPAddress mutations and the Network.utilization and
// Network.freeRanges fields:
//
//   - allocate.go: Allocate hands out the lowest free address of a network, or a specific one,
//     and never the same address twice, even from several server replicas at once;
//   - release.go: Release deletes an address, which frees it — unless a VM uses it (only an
//     operator's force releases it before its VM goes);
//   - utilization.go: Utilization and FreeRanges describe how full a prefix is;
//   - space.go and range.go: the pure arithmetic over address intervals that all of them
//     share (no database, IPv4 and IPv6 alike, linear in the number of used addresses and
//     ranges, never in the size of the prefix);
//   - snapshot.go: loading what a network uses, in two queries, and the row lock;
//   - tx.go: joining the caller's transaction (a GraphQL mutation's) or opening one.
//
// Every write that depends on the set of a network's addresses or ranges — allocating,
// createIPAddress and updateIPAddress, reserving a range, changing the prefix — locks the
// network's row for the rest of its transaction (PostgreSQL SELECT … FOR UPDATE), so they
// take turns per network, on one replica or many; the unique index on (network, address)
// catches any writer outside a transaction.
//
// Which addresses are free: the host addresses of the prefix (IPv4 prefixes of /30 and wider
// lose their network and broadcast addresses, IPv6 prefixes of /126 and wider their
// subnet-router anycast address, see Usable; IPv4 /31 and /32, IPv6 /127 and /128 use every
// address) minus the network's gateway, its reserved ranges (IPRange) and its
// addresses (IPAddress rows, ALLOCATED or RESERVED).
//
// This package is a domain package: it never imports package graph.
package ipam
