/** A bar showing used of total (e.g. vCPUs allocated of capacity, quota used of limit). */
export function UsageBar({ used, total, unit = '', label }: { used: number; total: number; unit?: string; label?: string }) {
  const pct = total > 0 ? Math.min(100, (used / total) * 100) : 0;
  const tone = pct >= 90 ? 'bad' : pct >= 70 ? 'warn' : 'ok';
  return (
    <div className="usage" title={`${used} of ${total}${unit ? ' ' + unit : ''} (${pct.toFixed(0)} %)`}>
      {label && <span className="usage-label">{label}</span>}
      <span className="usage-track" role="meter" aria-valuemin={0} aria-valuemax={total} aria-valuenow={used}>
        <span className={`usage-fill usage-${tone}`} style={{ width: `${pct}%` }} />
      </span>
      <span className="usage-text">
        {used}/{total > 0 ? total : '∞'} {unit}
      </span>
    </div>
  );
}
