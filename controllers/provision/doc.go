// Package provision is the VM state machine of SPEC.md §5: what the provisioning mutations
// accept, the worker tasks that carry them out, and how node agents' reports move a VM to
// its next state. It never talks to a hypervisor: it writes Assignments, and the node agent
// of each node realizes them and reports back through reportAssignmentStatus.
//
// # The VM data path, in one walk
//
// Each step exists because it does work the others cannot:
//
//  1. Mutation (createVirtualMachine, requests.go). Checks the request, and answers at once
//     what can be explained at once: a bad flavor, network or key is VALIDATION, no room is
//     NO_CAPACITY or QUOTA_EXCEEDED with the placement explanation, a full network is
//     RESOURCE_EXHAUSTED naming it. Runs as the viewer, in one transaction with its audit row.
//  2. Placement (package placement, same transaction). Chooses the node and charges it and the
//     tenant's quota, and gives the VM its NICs: a port per network with a MAC and an address
//     from IPAM. One transaction, so a VM never exists without its node, quota or addresses,
//     and a refused VM leaves nothing behind. It records vm:create in the outbox (package
//     outbox) in the same transaction, so the task survives a crash after commit.
//  3. Provisioning task (vm:create on the VM's region queue, handlers.go and prepare.go). The
//     slow, retried work between "placed" and "realized", Nova-conductor style: wait until
//     the VM's image is ready on the server (ACTIVE or DEPRECATED; ERROR fails the VM naming
//     the image; PENDING or DOWNLOADING waits without using up retries, see ErrNotReady),
//     render the config drive (RenderConfigDrive: instance-id, host name, user-data, each NIC's
//     addresses, gateway and DNS, SSH keys: rows the agent may not read), then write the
//     Assignment carrying the drive. (Volumes are placed on the VM's node when attached and
//     created there by assignments of their own: volumes.go.)
//     It is a task, not part of the mutation, because waiting for an image can take minutes
//     and must survive worker restarts.
//  4. Assignment (ent Assignment). The one record a node's agent reads: desired state,
//     generation, the VM, its config drive. Every later request (start, stop, reboot, delete)
//     is a new generation of it, written by its own task.
//  5. Agent (package nodeagent). Realizes the newest generation on its hypervisor: defines
//     the domain with its disks, the NICs of the VM's ports and the cidata CD-ROM it builds
//     from the assignment's drive, boots it from bootDevice, starts, stops or removes it.
//  6. Report (reportAssignmentStatus, report.go). The agent's outcome moves the VM to its
//     next state (ACTIVE, STOPPED, ERROR, or deleted, which releases node, quota and
//     addresses through placement).
//  7. Subscription (virtualMachineStatusChanged). Every status change is published after
//     commit, so dashboards and clients follow the walk live, across server replicas.
//
// # States (status, with statusReason always saying what is happening)
//
//	createVirtualMachine   INITIALIZING (placed, addresses given; vm:create enqueued)  --vm:create (prepared)-->  CREATING
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
// # Volumes (volumes.go)
//
// A volume lives on the node of the first VM it is attached to: attachVolume (or
// createVolume with a VM) charges that node's disk and the tenant's storage quota
// (placement.ChargeVolume) and gives the volume an assignment of its own, which the agent
// realizes by creating it in its pool (desired RUNNING) or deleting it with its data
// (ABSENT; the report then deletes the row and gives the charge back). Attach and detach set
// the VM's assignment back to PENDING at the same generation (a new generation of a running
// VM would be a reboot); the agent redefines the domain, hot-plugs where it can, and reports
// the volumes the domain has now (volumeIDs), which alone moves ATTACHING to ATTACHED and
// DETACHING to AVAILABLE.
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
// says what it was waiting for. VM status reasons are read by tenants, so they never name a
// physical node (operators read the VM's node and assignments). ERROR is retryable: start,
// stop and delete accept an ERROR VM.
//
// [Service.Resize] changes a STOPPED VM's flavor (resizeVirtualMachine): a new assignment
// generation on the same node, or on a cold move the old node's assignment ABSENT and a
// new STOPPED one on the new node.
package provision
