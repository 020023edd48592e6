// How the dashboard writes dates, numbers and sizes: every page formats through these functions,
// which use the browser's locale (Intl) so that a date or a number reads the same everywhere.
//
// Sizes: the API counts memory in MB and disk in GB, both in units of 1024 (a "MB" is a MiB, a
// "GB" a GiB). The dashboard labels them with binary units and picks the largest unit that keeps
// the number at 1 or more: 512 MiB, 64 GiB, 1.5 TiB.

/** A locale as Intl takes it; undefined means the browser's. */
export type Locale = string | undefined;

/** The binary units sizes are shown in, smallest first. */
const sizeUnits = ['MiB', 'GiB', 'TiB', 'PiB'] as const;

/** A unit the API counts sizes in: memory in MiB (memoryMB), disk in GiB (diskGB, storageGB). */
export type SizeUnit = 'MiB' | 'GiB';

const numberFormats = new Map<string, Intl.NumberFormat>();

function numberFormat(locale: Locale, maxFractionDigits: number): Intl.NumberFormat {
  const key = `${locale ?? ''}|${maxFractionDigits}`;
  let f = numberFormats.get(key);
  if (!f) {
    f = new Intl.NumberFormat(locale, { maximumFractionDigits: maxFractionDigits, useGrouping: true });
    numberFormats.set(key, f);
  }
  return f;
}

/** n with the locale's digit grouping and at most maxFractionDigits decimals: "12,345", "0.8". */
export function formatNumber(n: number, maxFractionDigits = 0, locale?: Locale): string {
  return numberFormat(locale, maxFractionDigits).format(n);
}

/** A size split into a number and its unit, e.g. (1536, 'MiB') → { value: 1.5, unit: 'GiB' }. */
export function sizeParts(value: number, unit: SizeUnit): { value: number; unit: string } {
  let i = sizeUnits.indexOf(unit);
  let v = value;
  while (Math.abs(v) >= 1024 && i < sizeUnits.length - 1) {
    v /= 1024;
    i++;
  }
  return { value: v, unit: sizeUnits[i] };
}

/** A size in the API's unit as the largest binary unit: "512 MiB", "64 GiB", "1.5 TiB". */
export function formatSize(value: number, unit: SizeUnit, locale?: Locale): string {
  const p = sizeParts(value, unit);
  return `${formatNumber(p.value, 1, locale)} ${p.unit}`;
}

/**
 * used of total, both in the unit that suits total (so the two numbers compare at a glance):
 * "12/64 GiB", "0.5/2 TiB", "<0.1/2 TiB" for a little that rounds to nothing. A total of 0 or
 * less means unlimited: "12 GiB/∞".
 */
export function formatSizeOf(used: number, total: number, unit: SizeUnit, locale?: Locale): string {
  if (total <= 0) return `${formatSize(used, unit, locale)}/∞`;
  const p = sizeParts(total, unit);
  const scale = 1024 ** (sizeUnits.indexOf(p.unit as (typeof sizeUnits)[number]) - sizeUnits.indexOf(unit));
  const u = used / scale;
  const shown = u > 0 && u < 0.05 ? `<${formatNumber(0.1, 1, locale)}` : formatNumber(u, 1, locale);
  return `${shown}/${formatNumber(p.value, 1, locale)} ${p.unit}`;
}

const dateTimeFormats = new Map<string, Intl.DateTimeFormat>();

/** A date and time to the minute in the browser's zone and locale: "Nov 21, 2026, 3:42 PM"; "—" when missing or invalid. */
export function formatDateTime(iso: string | null | undefined, locale?: Locale): string {
  if (!iso) return '—';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '—';
  const key = locale ?? '';
  let f = dateTimeFormats.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short' });
    dateTimeFormats.set(key, f);
  }
  return f.format(t);
}

const relativeUnits: [number, Intl.RelativeTimeFormatUnit][] = [
  [365 * 86400, 'year'],
  [30 * 86400, 'month'],
  [7 * 86400, 'week'],
  [86400, 'day'],
  [3600, 'hour'],
  [60, 'minute'],
  [1, 'second'],
];

const relativeFormats = new Map<string, Intl.RelativeTimeFormat>();

/**
 * iso relative to now in whole units, rounded toward zero: "5 min. ago", "in 2 hr.", "now" within
 * five seconds; "—" when missing or invalid.
 */
export function relativeTime(iso: string | null | undefined, now: number = Date.now(), locale?: Locale): string {
  if (!iso) return '—';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '—';
  const key = locale ?? '';
  let f = relativeFormats.get(key);
  if (!f) {
    f = new Intl.RelativeTimeFormat(locale, { numeric: 'auto', style: 'short' });
    relativeFormats.set(key, f);
  }
  const secs = Math.round((t - now) / 1000);
  if (Math.abs(secs) < 5) return f.format(0, 'second');
  for (const [size, unit] of relativeUnits) {
    if (Math.abs(secs) >= size) return f.format(Math.trunc(secs / size), unit);
  }
  return f.format(0, 'second');
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
