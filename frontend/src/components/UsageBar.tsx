import { formatNumber, formatSizeOf, type SizeUnit } from '../lib/format';

/**
 * A bar showing used of total (e.g. vCPUs allocated of capacity, quota used of limit). Counts
 * take a unit label (unit="U"); sizes say which unit the API gave them in (size="MiB" for
 * memoryMB, size="GiB" for diskGB) and are shown in the binary unit that suits the total.
 */
export function UsageBar({ used, total, unit = '', size, label }: { used: number; total: number; unit?: string; size?: SizeUnit; label?: string }) {
  const pct = total > 0 ? Math.min(100, (used / total) * 100) : 0;
  const tone = pct >= 90 ? 'bad' : pct >= 70 ? 'warn' : 'ok';
  const text = size
    ? formatSizeOf(used, total, size)
    : `${formatNumber(used)}/${total > 0 ? formatNumber(total) : '∞'}${unit ? ' ' + unit : ''}`;
  return (
    <div className="usage" title={`${text} (${formatNumber(pct)} %)`}>
      {label && <span className="usage-label">{label}</span>}
      <span className="usage-track" role="meter" aria-label={label ? `${label}: ${text}` : text} aria-valuemin={0} aria-valuemax={total} aria-valuenow={used}>
        <span className={`usage-fill usage-${tone}`} style={{ width: `${pct}%` }} />
      </span>
      <span className="usage-text">{text}</span>
    </div>
  );
}
