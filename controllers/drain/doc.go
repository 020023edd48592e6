// Package drain takes compute nodes out of service: cordon (no new placements), uncordon,
// and drain (cordon, then move every VM elsewhere).
//
//   - authorize.go: who may (platform operators and admins; not maintainers, tenants or
//     node agents).
//   - cordon.go: Cordon and Uncordon, both idempotent. Uncordon ends a drain.
//   - drain.go: Drain. In the caller's transaction it cordons the node, opens an automatic
//     Maintenance record linked to it, lists the VMs that cannot move and why (pinned by
//     schedulePolicy.nodeNames, or no other node has room: placement answers with the node
//     excluded), and moves the rest: placement.Placer.Move re-places each under its
//     creation rules and switches its allocation — without checking or adding to its
//     tenant's quota, since the VM is not new usage and quota must never block an
//     operator's drain — then retire (recreate.go) asks the node's agent to remove it.
//     Draining a node that is draining returns the running drain (no second maintenance).
//   - recreate.go: a move is cold, in two steps, so that a VM never runs twice. retire sets
//     the VM's assignment on the old node to desired ABSENT (generation bumped); the
//     assignment carries the VM's id (vmID), which the old node's agent reads even though
//     it may no longer read the VM, and removes the domain. Once that assignment is
//     APPLIED (the agent confirmed the domain gone), recreate writes an assignment on the
//     new node, and that node's agent builds the domain afresh. Moving the disk was the
//     other choice; the VM is rebuilt from its image instead because there are no
//     persistent root disks yet (the agent attaches at most a disk prepared per host), so
//     there is nothing of the old node's to carry over. When root disks become real
//     overlays, a cold move must copy the overlay between the two steps. A VM never
//     created on a hypervisor (no assignment yet) only changes node: its pending vm:create
//     task creates it there. VMs being deleted are not moved; the drain waits for them.
//   - progress.go: Progress runs every draining node's drain one step: recreate the VMs
//     whose old copies are gone; DRAINED (maintenance closed, torn-down assignments
//     removed) once no VM is left on the node and every moved VM is assigned on its new
//     node; FAILED at once when only the VMs listed as unmovable (drainUnmovable, recorded
//     when the drain started) are left, otherwise past the deadline, naming the stuck VMs
//     in drainMessage.
//
// A moved VM reads MOVING from retire until its new node reports the new copy (ACTIVE, or
// STOPPED for a VM that was stopped: state_after_move); its zone, cluster and node are the
// new node's from the move's transaction on (placement.Placer.Move). The new node's
// assignment is written by placement.AssignOnNode: one per VM and node, taking over a
// leftover one.
//
// # Silent nodes and force
//
// A node that is not READY cannot confirm that a VM stopped, and a VM of a silent node may
// well still run: it is never started elsewhere on the drain's own initiative. Draining a
// node that is not READY but sent heartbeats before is VALIDATION on force unless drainNode
// is given force:
// true, which records (drainForced) that the node is fenced or that an operator accepts
// the risk (a node that never sent a heartbeat has no agent that could run anything, and
// drains without force); a forced drain recreates the VMs at once and leaves the retired
// assignments for the node's agent, which removes the old copies if the node ever
// returns. A node's
// autoDrain setting is that say-so given in advance (package nodemonitor drains with
// force). A second drainNode with force makes a running drain forced (for a node that
// went silent while draining).
//
// # One driver
//
// The node monitor's tick (package nodemonitor, every 5 s on the process holding its
// lease) is the one driver of drain progress: it calls Progress. The node:drain task chain
// that used to drive drains as well is gone. The tick was kept because it already has to
// exist (it marks nodes NOT_READY and DOWN and starts automatic drains), it has exactly one
// runner at a time, it survives the loss of Redis or of an outbox row (a task chain
// breaks silently when one link is lost, which is why the tick was there as a safety net
// in the first place), and one loop over the draining nodes costs one query per tick when
// nothing drains. Drain itself runs the first step in the caller's transaction, so an
// empty node is DRAINED at once and a forced drain assigns its VMs elsewhere at once.
package drain
