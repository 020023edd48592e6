// Package nodemonitor watches compute node heartbeats from exactly one process at a time.
//
//   - lease.go: leader election over a Redis lease (SET NX PX, renewed at a third of its
//     period by the holder only, released on stop). It works on a real Redis and on the
//     in-process one of the embedded mode. A holder that cannot renew stops leading at once;
//     when a leader dies, its lease expires and another process takes over within one
//     lease period.
//   - monitor.go: the checks the leader runs every Interval. A READY node whose last
//     heartbeat is older than NotReadyAfter (50 s) becomes NOT_READY, and one older than
//     DownAfter (5 min) becomes DOWN, each with a statusReason and an Event row; a node that
//     asked for auto-cordon is cordoned once it has been quiet for its
//     autoCordonIntervalSeconds. VMs of a quiet node are never moved: they may well still
//     run, and moving them takes an operator (a forced drain) — or the node's own autoDrain
//     setting (autodrain.go): a node that asked for it is drained with force (package
//     drain: cordon, VMs recreated elsewhere, a Maintenance record) once it has been quiet
//     for its autoDrainIntervalSeconds, once, until an operator uncordons it. Nodes that
//     never sent a heartbeat are left alone (they are managed by hand). The VMs of a node
//     marked DOWN read UNKNOWN (provision.MarkUnknown); each tick gives the UNKNOWN VMs of
//     nodes READY again their reported state back (provision.RestoreKnown).
//   - Each tick also moves every drain on (drain.Progress: old copies confirmed gone are
//     recreated on their new node; drains finish, or fail past their deadline). The tick is
//     the one driver of drain progress.
//
// Run ties them together: the monitor runs while this process holds the lease.
package nodemonitor
