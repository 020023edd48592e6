// A VM's status timeline from its audit rows: each row whose before and after images differ in
// status is a transition, with the reason the VM carried after it and who made it (a user, a
// node agent or a system component such as the reconcile loop).

/** An audit row as the timeline reads it (auditLogs of objectType VirtualMachine). */
export interface AuditRow {
  id: string;
  createdAt: string;
  actor: string;
  action: string;
  before?: unknown;
  after?: unknown;
}

/** One status transition. from is absent for the VM's creation; to is DELETED for a delete. */
export interface Transition {
  id: string;
  at: string;
  actor: string;
  action: string;
  from?: string;
  to: string;
  reason?: string;
}

function field(image: unknown, name: string): string | undefined {
  if (image === null || typeof image !== 'object') return undefined;
  const v = (image as Record<string, unknown>)[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** The transitions among rows, oldest first whatever the order of rows. */
export function statusTimeline(rows: AuditRow[]): Transition[] {
  const out: Transition[] = [];
  for (const r of [...rows].sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt))) {
    const from = field(r.before, 'status');
    const to = r.after == null && r.before != null ? 'DELETED' : field(r.after, 'status');
    if (!to || to === from) continue;
    out.push({ id: r.id, at: r.createdAt, actor: r.actor, action: r.action, from, to, reason: field(r.after, 'status_reason') });
  }
  return out;
}
