// Package drain takes compute nodes out of service: cordon (no new placements), uncordon,
// and drain (cordon, then move every VM elsewhere).
//
//   - authorize.go: who may (platform operators and admins; not maintainers, tenants or
//     node agents).
//   - cordon.go: Cordon and Uncordon, both idempotent. Uncordon ends a drain.
//   - drain.go: Drain. In the caller's transaction it cordons the node, opens an automatic
//     Maintenance record linked to it, lists the VMs that cannot move and why (pinned by
//     schedulePolicy.nodeNames, or no other node fits: placement answers with the node
//     excluded), and moves the rest with placement.Placer.Move, which re-places each under
//     its creation rules and switches its allocation.
//   - recreate.go: what "move" asks of the hypervisors: the VM's assignment on the old node
//     is set to desired ABSENT and a new assignment on the new node to the VM's power
//     state, with generations bumped, so the node agents tear down and recreate it (a VM
//     never created on a hypervisor only changes node: its vm:create task runs there).
//     VMs being deleted are not moved; the drain waits for them to go.
//   - progress.go: Progress, run periodically by the node monitor: a draining node with no
//     VMs left and every old copy torn down is DRAINED (its maintenance closed, the
//     torn-down assignments removed); past its deadline it is FAILED, with the stuck VMs
//     named in drainMessage. Old copies are waited for only while the node is READY: the
//     agent of a node that is down removes them when it resyncs after coming back.
//   - task.go: the node:drain worker task. Drain records the first one in its transaction
//     (outbox, on the queue of the node's region, CheckEvery = 5 s later) unless the node
//     drained at once; its handler runs progressNode — the same check as Progress — on
//     that one node in a transaction of its own and, while the drain is still DRAINING,
//     records the next check in that transaction. The payload names the drain (its
//     deadline) and the check's sequence number, which is the dedup key: a check Asynq
//     runs twice enqueues one successor, and a check of an older drain, of a node gone
//     or of a drain that is DRAINED or FAILED does nothing, so the chain stops there.
//     Retries, backoff and timeout are the provisioning tasks' (provision.TaskOptions);
//     a check that fails for good writes why into drainMessage and leaves the drain
//     DRAINING. The node monitor's periodic Progress stays as the safety net: it finishes
//     or fails drains whose task chain broke (failed for good, outbox or Redis lost) or
//     that no worker serves. Both take the same rows in the same order, and running one
//     after the other is harmless (the second finds the drain over).
package drain
