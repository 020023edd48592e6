// A rack drawn as SVG: front and rear side by side, U numbers on the side (U1 at the bottom),
// every device at its units on the face(s) it occupies, coloured by its compute node's state
// or, as NetBox does, by its role.
// Hover shows the device's tooltip; click (or Enter) calls onOpen with the device.
import { useMemo, useState, type KeyboardEvent, type MouseEvent } from 'react';
import { layoutRack, shortDeviceName, unitNumbers, type DeviceRect, type Face } from '../../lib/rack/layout';
import { alertSwatch, nodeSwatch, roleSwatch } from '../../lib/rack/colors';
import { Tooltip, type TipAt } from './Tooltip';
import { DeviceTooltipBody } from './DeviceTooltip';
import type { ElevationDeviceView } from './types';
import './rack.css';

const UNIT = 14;
const GUTTER = 30;
const RAIL = 7;
const SLOT = 224;
const HEAD = 26;
const FACE_W = GUTTER + RAIL * 2 + SLOT;
const GAP = 36;

interface Props {
  rackName: string;
  height: number;
  devices: readonly ElevationDeviceView[];
  onOpen(d: ElevationDeviceView): void;
  /** When set, free units are buttons: clicking one picks it (mounting a device there). */
  onPickUnit?(unit: number, face: Face): void;
  /** Units to highlight as the device being placed. */
  picked?: { unit: number; height: number; face: Face } | null;
  /** Colour devices by their compute node's state (default) or by their role. */
  colorBy?: 'state' | 'role';
}

/** The units taken on each face by devices with a position. */
function takenUnits(devices: readonly ElevationDeviceView[]): Record<Face, Set<number>> {
  const taken: Record<Face, Set<number>> = { FRONT: new Set(), REAR: new Set() };
  for (const d of devices) {
    if (!d.position) continue;
    const faces: Face[] = d.fullDepth ? ['FRONT', 'REAR'] : [d.face];
    for (const f of faces) for (let u = d.position; u < d.position + d.height; u++) taken[f].add(u);
  }
  return taken;
}

export function RackElevation({ rackName, height, devices, onOpen, onPickUnit, picked, colorBy = 'state' }: Props) {
  const layout = useMemo(() => layoutRack(height, devices, UNIT), [height, devices]);
  const taken = useMemo(() => takenUnits(devices), [devices]);
  const [tip, setTip] = useState<{ d: ElevationDeviceView; at: TipAt } | null>(null);
  const width = FACE_W * 2 + GAP;
  const svgH = HEAD + layout.pixelHeight + RAIL * 2 + 4;

  function face(f: Face, rects: DeviceRect<ElevationDeviceView>[], x0: number) {
    const top = HEAD + RAIL;
    const slotX = GUTTER + RAIL;
    return (
      <g transform={`translate(${x0},0)`} aria-label={`${f === 'FRONT' ? 'Front' : 'Rear'} of ${rackName}`} role="group">
        <text x={GUTTER + RAIL + SLOT / 2} y={16} className="rack-face-title" textAnchor="middle">
          {f === 'FRONT' ? 'Front' : 'Rear'}
        </text>
        <rect x={GUTTER} y={HEAD} width={SLOT + RAIL * 2} height={layout.pixelHeight + RAIL * 2} rx={3} className="rack-frame" />
        {unitNumbers(height).map((u, i) => (
          <g key={u}>
            <rect x={slotX} y={top + i * UNIT} width={SLOT} height={UNIT} className={u % 2 ? 'rack-slot' : 'rack-slot rack-slot-alt'} />
            {picked && picked.face === f && u >= picked.unit && u < picked.unit + picked.height && (
              <rect x={slotX + 1} y={top + i * UNIT} width={SLOT - 2} height={UNIT} className="rack-slot-picked" data-testid="picked-unit" />
            )}
            {onPickUnit && !taken[f].has(u) && (
              <rect
                x={slotX}
                y={top + i * UNIT}
                width={SLOT}
                height={UNIT}
                className="rack-slot-free"
                role="button"
                tabIndex={0}
                aria-label={`Mount at U${u} ${f === 'FRONT' ? 'front' : 'rear'}`}
                data-testid="free-unit"
                data-unit={u}
                data-face={f}
                onClick={() => onPickUnit(u, f)}
                onKeyDown={(e) => {
                  if (e.key === 'Enter' || e.key === ' ') {
                    e.preventDefault();
                    onPickUnit(u, f);
                  }
                }}
              />
            )}
            <text x={GUTTER - 5} y={top + i * UNIT + UNIT / 2} className="rack-unit-no" textAnchor="end" dominantBaseline="central">
              {u}
            </text>
          </g>
        ))}
        {rects.map((r) => device(r, slotX, top))}
      </g>
    );
  }

  function device(r: DeviceRect<ElevationDeviceView>, slotX: number, top: number) {
    const d = r.device;
    const sw = colorBy === 'role' ? roleSwatch(d) : nodeSwatch(d.node);
    const alert = d.alerts.worst ? alertSwatch(d.alerts.worst) : null;
    const y = top + r.y;
    const show = (e: MouseEvent) => setTip({ d, at: { x: e.clientX, y: e.clientY } });
    const focus = (e: { currentTarget: Element }) => {
      const b = e.currentTarget.getBoundingClientRect();
      setTip({ d, at: { x: b.right, y: b.top } });
    };
    const key = (e: KeyboardEvent) => {
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        onOpen(d);
      }
    };
    const label = shortDeviceName(d.name, rackName);
    const attrs = r.primary
      ? { 'data-testid': 'device', 'data-name': d.name, 'data-position': d.position, 'data-height': d.height, 'data-face': r.face }
      : { 'data-testid': 'device-far-face', 'data-name': d.name, 'data-position': d.position, 'data-face': r.face };
    return (
      <g
        key={`${d.id}-${r.face}`}
        {...attrs}
        data-state={sw.key}
        className={`rack-device${r.primary ? '' : ' rack-device-far'}${r.overlaps ? ' rack-device-overlap' : ''}`}
        role="link"
        tabIndex={r.primary ? 0 : -1}
        aria-label={`${d.name}, U${d.position}${d.height > 1 ? `–U${d.position + d.height - 1}` : ''}, ${sw.label}`}
        onMouseEnter={show}
        onMouseMove={show}
        onMouseLeave={() => setTip(null)}
        onFocus={focus}
        onBlur={() => setTip(null)}
        onClick={() => onOpen(d)}
        onKeyDown={key}
      >
        <rect x={slotX + 1} y={y + 1} width={SLOT - 2} height={r.height - 2} rx={2} fill={sw.fill} stroke={r.overlaps ? '#d1343a' : sw.stroke} />
        <rect x={slotX + 1} y={y + 1} width={4} height={r.height - 2} fill={sw.stroke} />
        <text x={slotX + 10} y={y + r.height / 2} dominantBaseline="central" className="rack-device-name">
          {label}
          {r.overlaps ? ' ⚠ overlap' : ''}
        </text>
        {r.height >= UNIT * 2 - 1 || label.length < 18 ? (
          <text x={slotX + SLOT - (alert ? 20 : 8)} y={y + r.height / 2} dominantBaseline="central" textAnchor="end" className="rack-device-model">
            {d.model}
          </text>
        ) : null}
        {alert && <circle cx={slotX + SLOT - 9} cy={y + r.height / 2} r={4.5} fill={alert.stroke} className="rack-device-alert" />}
      </g>
    );
  }

  return (
    <div className="rack-elevation">
      <svg width={width} height={svgH} viewBox={`0 0 ${width} ${svgH}`} role="group" aria-label={`Elevation of ${rackName}`} data-testid="rack-elevation">
        {face('FRONT', layout.front, 0)}
        {face('REAR', layout.rear, FACE_W + GAP)}
      </svg>
      <Tooltip at={tip?.at ?? null} testId="device-tooltip">
        {tip && <DeviceTooltipBody d={tip.d} />}
      </Tooltip>
      {layout.ignored.length > 0 && (
        <div className="message message-info small" role="status">
          Not drawn: {layout.ignored.map((i) => `${i.device.name} (${i.reason === 'no-position' ? 'no position' : 'outside the rack'})`).join(', ')}
        </div>
      )}
      {layout.overlaps.length > 0 && (
        <div className="message message-error small" role="alert">
          Overlapping devices:{' '}
          {layout.overlaps.map((o) => `U${o.unit} ${o.face.toLowerCase()}: ${o.deviceIDs.map((id) => devices.find((d) => d.id === id)?.name ?? id).join(' and ')}`).join('; ')}
        </div>
      )}
    </div>
  );
}
