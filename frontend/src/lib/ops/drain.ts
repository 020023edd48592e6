// Drain progress of a node, from its drain fields (drainState, drainMessage, drainDeadline).

/** A VM the drain could not move (ComputeNode.drainUnmovable), listed when it started. */
export interface DrainUnmovableVM {
  vmID: string;
  vmName: string;
  reason: string;
}

export interface DrainFields {
  drainState?: string | null;
  drainMessage?: string | null;
  drainDeadline?: string | null;
  drainUnmovable?: DrainUnmovableVM[] | null;
}

export interface DrainProgress {
  /** DRAINING, DRAINED, FAILED, or null when the node was never drained */
  state: string | null;
  active: boolean;
  message: string;
  /** seconds until the drain fails, null when not draining or no deadline */
  secondsLeft: number | null;
  /** the VMs the drain cannot move and why (it does not wait for them) */
  unmovable: DrainUnmovableVM[];
}

/** What the page shows about a node's drain at time now. */
export function drainProgress(n: DrainFields, now: number = Date.now()): DrainProgress {
  const state = n.drainState ? n.drainState : null;
  const active = state === 'DRAINING';
  let secondsLeft: number | null = null;
  if (active && n.drainDeadline) {
    const t = Date.parse(n.drainDeadline);
    if (!Number.isNaN(t)) secondsLeft = Math.max(0, Math.round((t - now) / 1000));
  }
  return { state, active, message: n.drainMessage ?? '', secondsLeft, unmovable: n.drainUnmovable ?? [] };
}

/** The state a node is in for people: cordoned / draining / drained on top of its status. */
export function schedulingLabel(n: { schedulable: boolean; drainState?: string | null }): string {
  if (n.drainState === 'DRAINING') return 'DRAINING';
  if (!n.schedulable) return 'CORDONED';
  return 'SCHEDULABLE';
}
