// Package gslb serves VirtFlow's global services in GSLB mode through an existing
// authoritative DNS server, PowerDNS: VirtFlow owns one zone there and, for every global
// service, keeps the A/AAAA records of its FQDN equal to the VIPs of its healthy member region
// services (PowerDNS answers resolvers from its own database, so the answer survives a
// VirtFlow outage as it was last pushed), with the global service's TTL.
//
// Health: a region service is a healthy member when its load balancer forwards (reported by
// its load-balancer nodes) and its VIP accepts a connection on its first listener's port from
// the checker's vantage point (Checker); a member that fails either leaves the answer on the
// next push, and a detached region service (region closure) leaves it too. When no member is
// healthy the records are removed (NXDOMAIN-free empty answer: the name stays, with no
// addresses), so clients fail fast instead of reaching a dead site.
//
// PowerDNS is driven through its HTTP API (`api=yes`, a key, a backend that stores zones,
// e.g. gsqlite3). The package has no dependency on the API graph; the server's loop that
// reads global services and writes their status lives with the callers.
package gslb
