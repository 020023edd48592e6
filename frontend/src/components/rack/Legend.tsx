// A colour legend: a swatch and a label per entry.
import type { Swatch } from '../../lib/rack/colors';

export function Legend({ swatches, title }: { swatches: Swatch[]; title?: string }) {
  return (
    <div className="rack-legend" aria-label={title ?? 'Legend'}>
      {title && <span className="muted">{title}</span>}
      {swatches.map((s) => (
        <span key={s.key} className="rack-legend-item">
          <span className="rack-legend-swatch" style={{ background: s.fill, borderColor: s.stroke }} />
          {s.label}
        </span>
      ))}
    </div>
  );
}
