// Formatting for the operator pages: relative times ("3 min ago"), memory and disk sizes.

const units: [number, string][] = [
  [365 * 86400, 'y'],
  [30 * 86400, 'mo'],
  [7 * 86400, 'w'],
  [86400, 'd'],
  [3600, 'h'],
  [60, 'min'],
  [1, 's'],
];

/** iso relative to now: "just now", "5 min ago", "in 2 h", "—" when missing or invalid. */
export function relativeTime(iso: string | null | undefined, now: number = Date.now()): string {
  if (!iso) return '—';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '—';
  const secs = Math.round((now - t) / 1000);
  const abs = Math.abs(secs);
  if (abs < 5) return 'just now';
  for (const [size, name] of units) {
    if (abs >= size) {
      const n = Math.floor(abs / size);
      return secs >= 0 ? `${n} ${name} ago` : `in ${n} ${name}`;
    }
  }
  return 'just now';
}

/** A date-time for tooltips and tables, in the browser's zone: "2026-11-21 15:42". */
export function dateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '—';
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** Megabytes as the largest whole-ish unit: 512 MB, 64 GiB, 42 TiB. */
export function mb(n: number): string {
  if (Math.abs(n) >= 1024 * 1024) return `${round(n / (1024 * 1024))} TiB`;
  if (Math.abs(n) >= 1024) return `${round(n / 1024)} GiB`;
  return `${n} MB`;
}

/** Gigabytes: 500 GB, 1.4 PB-ish shown as TB. */
export function gb(n: number): string {
  if (Math.abs(n) >= 1024) return `${round(n / 1024)} TiB`;
  return `${n} GB`;
}

function round(x: number): string {
  return x >= 100 ? String(Math.round(x)) : String(Math.round(x * 10) / 10);
}

/** The value of an <input type="datetime-local"> showing d in the browser's zone, to the minute. */
export function toLocalInput(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** An <input type="datetime-local"> value (browser's zone) as an ISO time; null when empty or invalid. */
export function fromLocalInput(v: string): string | null {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(v)) return null;
  const t = new Date(v);
  return Number.isNaN(t.getTime()) ? null : t.toISOString();
}
