// Package scheduler decides where VMs go. It is pure: Schedule reads an immutable
// Snapshot of clusters, nodes and quotas plus a Request, and returns a Decision (or a
// *NoPlacementError saying why nowhere). Committing the decision — re-checking capacity
// and quota under a lock, retrying on conflict — belongs to the caller.
//
// The pipeline (SPEC.md §4):
//
//  1. Cluster choice: clusters of the request's region, filtered by the policy's cluster
//     names and labels, ordered by weight (highest first), ties by free capacity, then ID.
//     A request never spans clusters: the first cluster that takes the whole group wins.
//  2. Per VM of the group, the nodes of the cluster (with sampling, until enough were
//     found feasible) go through the filters in order (Ready, Schedulable, Provider,
//     NodeName, label hard (anti-)affinity, CPU, memory, disk, zone rules, quota); the
//     first that rejects a node records a reason code.
//  3. Nodes that pass are scored by each weighted Scorer (0..MaxScore); the total is the
//     weighted sum and the best total wins, ties to the lowest node ID.
//  4. The VM is placed on a scratch copy of the allocations, so the next VM of the group
//     sees the capacity, quota and zones it took. The group's VMs already running
//     (Request.GroupNodeIDs) count for zone rules and AZ spreading.
//
// Each filter and scorer has one form: it is prepared once per cluster tried (compiling
// the request against an index of the snapshot), then takes the cluster's nodes a chunk
// at a time from a compact, pointer-free copy of their allocations. The plugins are this
// package's own (Filter and Scorer cannot be implemented elsewhere); Config chooses,
// orders and weighs them.
//
// The Decision explains every node of the chosen cluster (rejecting filter or scores),
// as NodeResults or, with Config.CompactExplain, as a compact Explanation; a
// NoPlacementError counts rejections per filter. Config.MaxNodesToScore (set by
// DefaultConfig) and Config.ScoreSampleRatio evaluate only part of the nodes per VM, like
// kube-scheduler's percentageOfNodesToScore, so that a decision's work does not grow
// with the fleet; a sampled decision reads only the nodes it looks at.
//
// Schedule indexes each Snapshot's static node attributes, and the CPU sums per cluster
// and AZ, on first use (see Snapshot.Invalidate, Snapshot.AllocationsChanged);
// Snapshot.Apply commits a decision to a cached snapshot, sums included.
package scheduler
