// Package placement puts VMs on compute nodes for real: it loads a scheduler snapshot of a
// region from the database, runs the pure scheduler (package scheduler) and commits the
// decision in the caller's transaction, so that several server and worker processes can
// place at the same time without ever overcommitting a node or a tenant's quota. It also
// frees what deleted VMs held, scales region services, explains decisions without writing,
// and reads and sets quotas. Resolvers in package graph are one call into it.
//
// # Snapshot (snapshot.go)
//
// A snapshot is the clusters of one region and their nodes, as one tenant sees them for
// placement, read in a constant number of small queries (at most ten) whatever the number
// of nodes:
//
//   - Ready is status READY; Schedulable is the node's flag (false while cordoned).
//   - Providers are the names of the node's providers; a request asks for its flavor's.
//   - Failure domains: a host's own power, network and rack zone override its rack's. A
//     rack in no rack zone is a rack zone of its own, named "<floor>/<rack>", so RACK rules
//     work on plain racks too. A host with no zone of a kind has none (zone rules of that
//     kind reject it).
//   - Host group: a host may be in several; the node counts against the tenant's quota of
//     the lowest-id group of its host that has a quota for the tenant, or else belongs to
//     the lowest-id group (without a quota: not limited). Releasing a VM uses the same rule.
//   - GroupCores of a quota is the sum of the physical cores (Host.cpuCores) of every host of
//     the group; a quota's CPU percentage caps the tenant's vCPUs in the group at that share
//     of them.
//   - Dedicated CPUs: a dedicated vCPU is pinned to a hardware thread, and pinning takes
//     whole physical cores: with t threads per core (Host.cpuThreads / Host.cpuCores, 1 when
//     the host does not say or they do not divide), DedicatedCoresFree is the free vCPUs
//     rounded down to whole cores, ((capacity - allocated) / t) * t. Allocations fill cores
//     thread by thread, so this is what is left of entirely free cores. The commit re-checks
//     exactly this in SQL.
//
// # Snapshot cache (cache.go, cachehook.go)
//
// Servers and workers keep each region's snapshot in memory (Snapshots, made in
// internal/app and given as Config.Snapshots), so that a placement reads no nodes in its
// write transaction: the cache follows committed changes through events on Redis (changed
// nodes and quotas are read again, one query each; anything else reloads the region), is
// read in full after a reconnect and every MaxAge, and reserves each decision until its
// commit so that concurrent placements of one process spread. It is never trusted to
// refuse: a request that fits nowhere in it is decided again on a snapshot loaded in the
// transaction. Being behind costs a retry, never an overcommit (next section).
//
// # Commit (commit.go, locks.go)
//
// A decision is applied with conditional UPDATEs that the database re-checks: a node row is
// only incremented when the new allocation still fits its capacity (and, for a dedicated
// flavor, its whole free cores), a quota row only when every non-zero limit still holds
// (vCPUs, CPU percent of the group's cores, memory, storage). Which quota row each node
// counts in, and the group's cores, are read in the transaction after the node rows are
// written (quotasOf), never taken from the snapshot: a cache that has not heard of a quota
// yet cannot let a placement past it. SetQuota locks the group's node rows before it writes
// a new quota, so a concurrent placement is either counted by it or sees it. PostgreSQL re-evaluates the
// condition on the newest row version after waiting for a concurrent writer, so two
// transactions can never both take the last capacity. Rows are written in one global lock
// order — region service, VM, compute nodes by id, quotas by id — so concurrent placements
// do not deadlock. A row that no longer fits makes the attempt undo what it applied and
// retry with a fresh snapshot (Config.MaxAttempts attempts, then NO_CAPACITY or
// QUOTA_EXCEEDED). Locks an undone attempt keeps are honoured by the next one: a row below
// one already held is only taken if it is free at once (SKIP LOCKED), otherwise the attempt
// is retried, so no transaction ever waits out of order. Scaling a region service locks
// its row first (SELECT ... FOR UPDATE), so concurrent scales of one service serialize and
// each sees the replicas of the one before. Nothing in process memory keeps placements
// apart.
//
// On SQLite (the embedded mode) writers are serialized by the database itself: every
// transaction begins IMMEDIATE and waits its turn (busy timeout), row locks do not exist
// and are skipped, and a transaction placement opens itself is retried when SQLite reports
// the database busy or locked.
//
// # Release (release.go)
//
// Deleting a VM gives its flavor back to its node and to its tenant's quota, in the same
// lock order, never below zero. Deleting a replica of a region service lowers the service's
// replicas; the service goes with its last replica.
package placement
