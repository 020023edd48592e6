// Time windows for list filters ("last hour", "last 7 days"): the key in the URL and the
// lower bound it means.

export const windows: { key: string; label: string; seconds: number }[] = [
  { key: '1h', label: 'last hour', seconds: 3600 },
  { key: '24h', label: 'last 24 hours', seconds: 86400 },
  { key: '7d', label: 'last 7 days', seconds: 7 * 86400 },
  { key: '30d', label: 'last 30 days', seconds: 30 * 86400 },
];

/** The RFC 3339 start of window key at time now, or undefined for "any time" / unknown keys. */
export function windowStart(key: string | null | undefined, now: number = Date.now()): string | undefined {
  const w = windows.find((x) => x.key === key);
  if (!w) return undefined;
  // whole minutes, so the query's variables stay the same across re-renders within a minute
  const t = Math.floor((now - w.seconds * 1000) / 60000) * 60000;
  return new Date(t).toISOString();
}
