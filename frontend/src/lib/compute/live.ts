// Merging live status events (subscriptions) into what a query returned, so rows change in
// place without a reload: the newer of the two versions of a record wins (by updatedAt).

/** Anything with an id and, optionally, when it last changed. */
export interface Versioned {
  id: string;
  updatedAt?: string | null;
}

/** True when b is at least as new as a (a missing time counts as oldest). */
export function isNewer(a: Versioned, b: Versioned): boolean {
  const ta = a.updatedAt ? Date.parse(a.updatedAt) : -Infinity;
  const tb = b.updatedAt ? Date.parse(b.updatedAt) : -Infinity;
  return tb >= ta;
}

/** Records the latest event per id (a subscription handler's accumulator). */
export function addEvent<T extends Versioned>(events: Record<string, T> | undefined, ev: T): Record<string, T> {
  const prev = events?.[ev.id];
  if (prev && !isNewer(prev, ev)) return events ?? {};
  return { ...(events ?? {}), [ev.id]: ev };
}

/** The row with the newer event's fields laid over it; the row itself when the event is older or absent. */
export function withEvent<R extends Versioned, E extends Versioned>(row: R, ev: E | undefined): R {
  if (!ev || ev.id !== row.id || !isNewer(row, ev)) return row;
  return { ...row, ...ev };
}

/** Every row with its event applied. */
export function mergeEvents<R extends Versioned, E extends Versioned>(rows: readonly R[], events: Record<string, E> | undefined): R[] {
  if (!events) return [...rows];
  return rows.map((r) => withEvent(r, events[r.id]));
}

/** Ids of events newer than `since` (ms) for records not among rows: something the list does not show yet. */
export function unknownIds(rows: readonly Versioned[], events: Record<string, Versioned> | undefined): string[] {
  if (!events) return [];
  const known = new Set(rows.map((r) => r.id));
  return Object.keys(events).filter((id) => !known.has(id));
}
