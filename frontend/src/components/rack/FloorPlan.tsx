// A floor drawn as SVG: racks placed by row and position, coloured by occupancy or by worst
// open alert (colourBy), with a tooltip on hover; click (or Enter) calls onOpen with the rack.
import { useMemo, useState, type KeyboardEvent, type MouseEvent } from 'react';
import { defaultGeometry as g, layoutFloor } from '../../lib/rack/floorplan';
import { fromCounts } from '../../lib/rack/occupancy';
import { alertSwatch, occupancySwatch, textOn } from '../../lib/rack/colors';
import { Tooltip, type TipAt } from './Tooltip';
import { formatSizeOf } from '../../lib/format';
import { alertText, type FloorRackView } from './types';
import './rack.css';
import { rackPlace } from '../../lib/rack/place';

export type FloorColouring = 'occupancy' | 'alerts';

interface Props {
  racks: readonly FloorRackView[];
  colourBy: FloorColouring;
  onOpen(r: FloorRackView): void;
}

function RackTip({ r }: { r: FloorRackView }) {
  const o = fromCounts(r.usedUnits, r.rack.height);
  const c = r.capacity;
  return (
    <div className="rack-tip">
      <strong>{r.rack.name}</strong>
      <div>
        {rackPlace(r.rack.row, r.rack.position)}
        {r.rack.status.replace(/_/g, ' ').toLowerCase()}
      </div>
      <div>
        Occupancy {o.percent} % ({r.usedUnits}/{r.rack.height} U) · {r.hosts} devices
      </div>
      <div>Alerts: {alertText(r.alerts)}</div>
      <div>
        Nodes {c.readyNodes}/{c.nodes} ready · vCPU {c.cpuAllocated}/{c.cpuCapacity}
      </div>
      <div>
        Memory {formatSizeOf(c.memoryAllocatedMB, c.memoryCapacityMB, 'MiB')}
      </div>
      {r.rack.powerZone && <div>Power zone: {r.rack.powerZone}</div>}
    </div>
  );
}

export function FloorPlan({ racks, colourBy, onOpen }: Props) {
  const layout = useMemo(() => layoutFloor(racks, (r) => r.rack), [racks]);
  const [tip, setTip] = useState<{ r: FloorRackView; at: TipAt } | null>(null);
  const width = Math.max(layout.width, 300);
  const height = layout.height + 8;

  return (
    <div className="floor-plan">
      <svg width={width} height={height} viewBox={`0 0 ${width} ${height}`} role="group" aria-label="Floor plan" data-testid="floor-plan">
        {Array.from({ length: layout.columns }, (_, i) => (
          <text key={i} x={g.left + i * (g.rackWidth + g.gapX) + g.rackWidth / 2} y={g.top - 10} textAnchor="middle" className="floor-col-label">
            {i + 1}
          </text>
        ))}
        {layout.rows.map((row, i) => (
          <g key={row}>
            <rect x={g.left - 6} y={g.top + i * g.rowPitch + g.rackHeight + 8} width={width - g.left} height={g.rowPitch - g.rackHeight - 16} className="floor-aisle" rx={3} />
            <text x={8} y={g.top + i * g.rowPitch + g.rackHeight / 2} dominantBaseline="central" className="floor-row-label">
              Row {row}
            </text>
          </g>
        ))}
        {layout.placed.map(({ rack: r, x, y }) => {
          const o = fromCounts(r.usedUnits, r.rack.height);
          const sw = colourBy === 'occupancy' ? occupancySwatch(o.fraction) : alertSwatch(r.alerts.worst);
          const ink = textOn(sw);
          const show = (e: MouseEvent) => setTip({ r, at: { x: e.clientX, y: e.clientY } });
          const key = (e: KeyboardEvent) => {
            if (e.key === 'Enter' || e.key === ' ') {
              e.preventDefault();
              onOpen(r);
            }
          };
          return (
            <g
              key={r.rack.id}
              className="floor-rack"
              data-testid="floor-rack"
              data-name={r.rack.name}
              data-colour={sw.key}
              role="link"
              tabIndex={0}
              aria-label={`${r.rack.name}: ${o.percent} % used, alerts ${alertText(r.alerts)}`}
              onMouseEnter={show}
              onMouseMove={show}
              onMouseLeave={() => setTip(null)}
              onFocus={(e) => {
                const b = e.currentTarget.getBoundingClientRect();
                setTip({ r, at: { x: b.right, y: b.top } });
              }}
              onBlur={() => setTip(null)}
              onClick={() => onOpen(r)}
              onKeyDown={key}
            >
              <rect x={x} y={y} width={g.rackWidth} height={g.rackHeight} rx={4} fill={sw.fill} stroke={sw.stroke} className="floor-rack-body" />
              <text x={x + g.rackWidth / 2} y={y + 22} textAnchor="middle" fill={ink} className="floor-rack-name">
                {r.rack.name}
              </text>
              <text x={x + g.rackWidth / 2} y={y + 40} textAnchor="middle" fill={ink} className="floor-rack-sub">
                {o.percent} % · {r.rack.height}U
              </text>
              <text x={x + g.rackWidth / 2} y={y + 56} textAnchor="middle" fill={ink} className="floor-rack-sub">
                {r.alerts.worst ? `⚠ ${r.alerts.worst.toLowerCase()}` : `${r.hosts} devices`}
              </text>
            </g>
          );
        })}
      </svg>
      <Tooltip at={tip?.at ?? null} testId="rack-tooltip">
        {tip && <RackTip r={tip.r} />}
      </Tooltip>
      {layout.unplaced.length > 0 && (
        <p className="muted small">
          Without a row or position: {layout.unplaced.map((r) => r.rack.name).join(', ')}
        </p>
      )}
    </div>
  );
}
