// Listeners as text and as the rows of the listener form.

export type Listener = { port: number; protocol: string; targetPort: number };

/** "80/TCP → 8080, 443/HTTP → 8443", or "none". */
export function describeListeners(ls: readonly Listener[] | null | undefined): string {
  if (!ls || ls.length === 0) return 'none';
  return ls.map((l) => `${l.port}/${l.protocol} → ${l.targetPort}`).join(', ');
}
