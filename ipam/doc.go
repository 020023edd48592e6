// Package ipam manages IP address space: the rules ent hooks enforce on every network and
// address (a gateway inside its prefix, an address inside its network and not its network or
// broadcast address), and later the allocation of free addresses.
package ipam
