// What the dashboard makes of a VM's status: the statuses a filter offers, what UNKNOWN means,
// and when the operator-only force actions (force delete, drain with force) are offered.
// The server has the last word on every action; these only decide what to show.

/** The VM statuses other than DELETED, in the order the status filter offers them. */
export const vmStatuses = [
  'INITIALIZING', 'SCHEDULED', 'CREATING', 'ACTIVE', 'STARTING', 'STOPPING', 'STOPPED',
  'REBOOTING', 'MOVING', 'DELETING', 'ERROR', 'UNKNOWN',
] as const;

/** The statuses of a VM waiting on its node's agent (the overview's "in progress"). */
export const vmBusyStatuses = ['INITIALIZING', 'SCHEDULED', 'CREATING', 'STARTING', 'STOPPING', 'REBOOTING', 'MOVING', 'DELETING'] as const;

/** Why a VM reads UNKNOWN: shown as its badge's tooltip and next to force delete. */
export const unknownExplanation = 'node DOWN: state unknown';

/** The tooltip of a VM's status badge: its status reason, or what UNKNOWN means when it has none. */
export function vmStatusTitle(status: string, reason?: string | null): string | undefined {
  if (status === 'UNKNOWN') return reason ? `${unknownExplanation} — ${reason}` : unknownExplanation;
  return reason || undefined;
}

/**
 * Whether force delete is offered: to operators only, for a VM that is not already gone and
 * whose node cannot confirm a normal delete — the VM reads UNKNOWN, or its node is not READY.
 * nodeStatus is null when the VM is not placed (a normal delete is immediate then).
 */
export function canForceDelete(vm: { status: string; nodeStatus?: string | null }, isOperator: boolean): boolean {
  if (!isOperator || vm.status === 'DELETED') return false;
  if (vm.status === 'UNKNOWN') return true;
  return !!vm.nodeStatus && vm.nodeStatus !== 'READY';
}

/** What force delete does, shown on its button and in its confirmation. */
export function forceDeleteWarning(vm: { name: string; status: string; node?: { name: string; status: string } | null }): string {
  const why = vm.status === 'UNKNOWN' || !vm.node ? unknownExplanation : `node ${vm.node.name} is ${vm.node.status.replace(/_/g, ' ').toLowerCase()}`;
  return `Force delete ${vm.name}? (${why}) It is deleted at once without waiting for its node: its capacity and quota ` +
    "are freed now, and the node's agent removes the leftover domain if the node comes back. Only do this when the node is lost or fenced.";
}

/** Whether draining a node with this status needs force (the API refuses a plain drain otherwise). */
export function drainNeedsForce(nodeStatus: string | null | undefined): boolean {
  return !!nodeStatus && nodeStatus !== 'READY';
}

/** What a VM's guestState says, for its badge's tooltip: the guest's own word, not the domain's. */
export function guestStateTitle(state: string | null | undefined): string {
  switch (state) {
    case 'BOOTING': return 'the domain runs; the guest has not said it is up yet';
    case 'READY': return 'the guest said it is up (readiness call or QEMU guest agent)';
    case 'UNREACHABLE': return 'the guest did not say it is up within its deadline';
    default: return 'the domain does not run, or its guest was never told how to report';
  }
}
