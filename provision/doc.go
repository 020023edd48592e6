// Package provision is the VM state machine of SPEC.md §5: what the provisioning mutations
// accept, the worker tasks that carry them out, and how node agents' reports move a VM to
// its next state. It never talks to a hypervisor: it writes Assignments, and the node agent
// of each node realizes them and reports back through reportAssignmentStatus.
//
// # States (status, with statusReason always saying what is happening)
//
//	createVirtualMachine   INITIALIZING (placed; vm:create enqueued)  --vm:create-->  CREATING
//	startVirtualMachine    STOPPED | ERROR            -> STARTING   --agent APPLIED running--> ACTIVE
//	stopVirtualMachine     ACTIVE | ERROR             -> STOPPING   --agent APPLIED stopped--> STOPPED
//	rebootVirtualMachine   ACTIVE                     -> REBOOTING  --agent APPLIED running--> ACTIVE
//	deleteVirtualMachine   any realized VM            -> DELETING   --agent APPLIED absent---> row deleted
//	agent FAILED, retries of a task spent, or stuck past the reconcile deadline -> ERROR
//	node marked DOWN (MarkUnknown)  ACTIVE | STOPPED | STARTING | STOPPING | REBOOTING -> UNKNOWN
//	node READY again (RestoreKnown) UNKNOWN -> what its assignment there says (ACTIVE, STOPPED, …)
//
// The mutation (requests.go) checks the current state, moves the VM to the transitional
// state at once, in the mutation's transaction and as the viewer (so authorization and the
// audit row are the mutation's), and records a task in the outbox (package outbox) in the
// same transaction. Asking for the state a VM is already in or heading to (stopping a
// STOPPED or STOPPING VM) is a no-op that returns the VM; asking for anything the current
// state does not allow is VALIDATION on field id, naming the state.
//
// A VM that was never realized — no Assignment yet, because vm:create has not run — is
// deleted at once by deleteVirtualMachine (placement.DeleteVM gives its capacity back); a
// vm:create still queued for it then finds no VM and does nothing. A realized VM is deleted
// asynchronously: DELETING, an ABSENT assignment, and once its agent reports it absent the
// assignment and the VM row are deleted and placement releases what it held. An operator's
// deleteVirtualMachine(force: true) deletes a realized VM at once (its node may be DOWN for
// good): its assignments become ABSENT and are detached from the VM, keeping its id (vmID),
// so each node's agent still removes the leftover domain and its report then deletes the
// assignment. A VM in the middle of a drain's move (no assignment on its new node yet) is
// deleted at once the same way.
//
// # Region services (servicestatus.go)
//
// A region service's status follows its replicas, recomputed in the transaction of every
// replica status change, and again by the regionservice:reconcile task (below) after an
// agent's report committed: CREATING while any replica is being created, ACTIVE when all are,
// ERROR naming a failed replica, UPDATING while some are stopped or changing state, and
// DELETING (set by placement) until its last replica is gone. Scaling down or deleting a
// service removes realized replicas asynchronously (the Placer's ReplicaRemover, set by New). Updating the
// service after its replica takes the rows in the order VM, service — the reverse of
// placement's — so a task or report racing a scale of the same service can hit a
// PostgreSQL deadlock; the loser is retried (tasks by Asynq, reports by the agent's next
// report), nothing is left half done. A service with fewer replicas than it wants (one
// deleted outside a scale) is UPDATING (or ERROR) and its statusReason says how many are
// missing; it is not re-placed automatically — scaleRegionService does that — because a
// re-placement from a status recompute could fight a scale or delete in flight.
//
// # Tasks (tasks.go, handlers.go, servicetask.go)
//
//	task                     payload                  queue               enqueued by
//	vm:create                VM id, generation 0      region:<VM region>  createVirtualMachine, start of a never-created VM, reconcile
//	vm:start|stop|reboot     VM id, generation from   region:<VM region>  the mutation of the same name
//	vm:delete                VM id, generation from   region:<VM region>  deleteVirtualMachine (not with force: that deletes at once)
//	regionservice:reconcile  service id               region:<svc region> ApplyReport (a replica's status changed or it was deleted)
//
// regionservice:reconcile locks only the service row and reads its replicas unlocked, so
// it never takes rows in the reverse of placement's order; it is deduplicated per service
// and ServiceBurst window (2 s, the task delayed to the window's end), so a burst of
// reports gives one task. It settles the service (settle, servicestatus.go: the same code
// as the in-transaction recompute, which ApplyReport keeps so the status is right at
// once); running it again writes nothing, and a service that is gone or DELETING is left
// alone. When its retries are spent, [Handlers.Failed] writes the error into the
// service's statusReason. Retries, backoff and timeout are those of the VM tasks.
//
// vm:create, vm:start, vm:stop, vm:reboot and vm:delete, on the queue of the VM's region
// ("region:<region name>", [Queue]). Each carries the VM id and the assignment generation
// it moves from; a handler sets the VM's Assignment on its node (creating it at generation
// 1 for vm:create, otherwise bumping the generation by one and setting the desired state
// RUNNING, STOPPED or ABSENT) in one transaction with the VM's status reason. A handler
// whose VM is gone, is no longer in the task's transitional state, or whose assignment has
// already moved past the task's generation does nothing: every task is idempotent and
// tasks never overtake each other. Tasks are retried with backoff ([TaskOptions]) and time
// out; when the last retry fails (or the task cannot be decoded), [Handlers.Failed] moves
// the VM to ERROR with the error as its reason, so no task dies silently in Redis.
//
// # The node agent's contract
//
// The agent of a node reads its Assignments (desiredState, generation, virtualMachine) and
// realizes the newest generation: RUNNING = the domain is defined and running; STOPPED =
// defined and shut off; ABSENT = undefined. A reboot is a new generation with desired
// state RUNNING while the VM's status is REBOOTING: the agent reboots the domain (a running
// domain at an older generation). It reports reportAssignmentStatus(id, generation, status
// APPLYING|APPLIED|FAILED, observedState, reason); [Service.ApplyReport] ignores reports for an older
// generation, records the rest on the assignment and moves the VM: APPLIED → ACTIVE,
// STOPPED or finalized delete; FAILED → ERROR with the agent's reason. A report moves the
// VM only when the VM is waiting for that desired state, so a report about the previous
// generation that arrives between a mutation and its task cannot undo the request. A
// reboot's previous generation wanted RUNNING too: there, an APPLIED report for a
// generation that was already APPLIED (a repeat from before the task bumped it) leaves the
// VM REBOOTING.
//
// # Reconcile (reconcile.go)
//
// [Reconciler] finds VMs that stayed in a transitional state past a deadline (10 min by
// default): an INITIALIZING VM whose vm:create never ran is enqueued again (at most
// [ReconcileConfig.MaxRequeue] times), everything else is moved to ERROR with a reason that
// names the node and what it was waiting for. ERROR is retryable: start, stop and delete
// accept an ERROR VM.
package provision
