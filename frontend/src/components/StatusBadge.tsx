// A coloured status pill for every status enum of the API (VM, node, service, alert, ...).

const tone: Record<string, string> = {
  ACTIVE: 'ok', READY: 'ok', RUNNING: 'ok', OK: 'ok', RESOLVED: 'ok', COMPLETED: 'ok', ALLOCATED: 'ok',
  INITIALIZING: 'busy', CREATING: 'busy', STARTING: 'busy', STOPPING: 'busy', REBOOTING: 'busy', MOVING: 'busy',
  DELETING: 'busy', SCALING: 'busy', PENDING: 'busy', IN_PROGRESS: 'busy', DRAINING: 'busy', RESERVED: 'busy',
  UPDATING: 'busy', SCHEDULED: 'busy', DOWNLOADING: 'busy', DEPRECATED: 'idle',
  STOPPED: 'idle', SHUTOFF: 'idle', UNKNOWN: 'unknown', BOOTING: 'busy', UNREACHABLE: 'warn', CORDONED: 'warn', ACKNOWLEDGED: 'warn',
  NOT_READY: 'warn', WARNING: 'warn', DEGRADED: 'warn', MINOR: 'warn', MAJOR: 'bad',
  ERROR: 'bad', DOWN: 'bad', FAILED: 'bad', CRITICAL: 'bad', FIRING: 'bad', OPEN: 'bad',
};

/**
 * The tone (ok, busy, idle, warn, bad, unknown) of a status value; UNKNOWN (e.g. a VM whose node
 * is DOWN) is drawn dashed, values the map does not know are idle.
 */
export function statusTone(status: string | null | undefined): string {
  return (status && tone[status.toUpperCase()]) || 'idle';
}

/** A pill showing status, with title as its tooltip (e.g. the status reason). */
export function StatusBadge({ status, title }: { status: string | null | undefined; title?: string | null }) {
  const s = status ?? 'UNKNOWN';
  return (
    <span className={`badge badge-${statusTone(s)}`} title={title ?? undefined} data-status={s}>
      {s.replace(/_/g, ' ').toLowerCase()}
    </span>
  );
}
