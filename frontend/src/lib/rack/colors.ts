// Colour scales of the rack pages: device colour by its compute node's state, rack colour by
// occupancy or by worst open alert. Pure code: see colors.test.ts.

export interface Swatch {
  key: string;
  label: string;
  fill: string;
  stroke: string;
}

/** What the colouring needs of a compute node (NodeSummary fits). */
export interface NodeState {
  status: string;
  cordoned: boolean;
}

export const nodeSwatches: Record<string, Swatch> = {
  ready: { key: 'ready', label: 'Ready', fill: '#d3f0dd', stroke: '#1f9d55' },
  'not-ready': { key: 'not-ready', label: 'Not ready', fill: '#fbe9c6', stroke: '#d9901a' },
  down: { key: 'down', label: 'Down', fill: '#f8d2d4', stroke: '#d1343a' },
  cordoned: { key: 'cordoned', label: 'Cordoned', fill: '#e6dcfa', stroke: '#7a4fd0' },
  unknown: { key: 'unknown', label: 'Unknown', fill: '#e6eaef', stroke: '#8793a3' },
  none: { key: 'none', label: 'No compute node', fill: '#dde6f3', stroke: '#4f6a8f' },
};

/** The swatch of a device by its node: cordoned wins over READY/NOT_READY, DOWN wins over cordoned. */
export function nodeSwatch(node: NodeState | null | undefined): Swatch {
  if (!node) return nodeSwatches.none;
  if (node.status === 'DOWN') return nodeSwatches.down;
  if (node.cordoned) return nodeSwatches.cordoned;
  if (node.status === 'READY') return nodeSwatches.ready;
  if (node.status === 'NOT_READY') return nodeSwatches['not-ready'];
  return nodeSwatches.unknown;
}

/** Occupancy bands, lowest first: [upper bound (exclusive, fraction), swatch]. */
export const occupancyBands: { below: number; swatch: Swatch }[] = [
  { below: 1e-9, swatch: { key: 'empty', label: 'Empty', fill: '#f4f6f9', stroke: '#aeb9c8' } },
  { below: 0.25, swatch: { key: 'low', label: '< 25 %', fill: '#dceafb', stroke: '#2b7bd8' } },
  { below: 0.5, swatch: { key: 'mid', label: '25–50 %', fill: '#a9cbf3', stroke: '#2b7bd8' } },
  { below: 0.75, swatch: { key: 'high', label: '50–75 %', fill: '#6ea5e8', stroke: '#1b5aa6' } },
  { below: 0.9, swatch: { key: 'higher', label: '75–90 %', fill: '#3a7fd4', stroke: '#174b8a' } },
  { below: Infinity, swatch: { key: 'full', label: '≥ 90 %', fill: '#1b4f9a', stroke: '#0f2f5c' } },
];

/** The swatch of an occupancy fraction (0..1); values outside are clamped. */
export function occupancySwatch(fraction: number): Swatch {
  const f = Number.isFinite(fraction) ? Math.min(1, Math.max(0, fraction)) : 0;
  return occupancyBands.find((b) => f < b.below)!.swatch;
}

/** Text colour readable on a swatch's fill. */
export function textOn(s: Swatch): string {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(s.fill);
  if (!m) return '#1d2430';
  const [r, g, b] = m.slice(1).map((h) => parseInt(h, 16) / 255);
  const luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  return luminance < 0.5 ? '#ffffff' : '#1d2430';
}

export const alertSwatches: Record<string, Swatch> = {
  none: { key: 'none', label: 'No open alert', fill: '#d3f0dd', stroke: '#1f9d55' },
  WARNING: { key: 'WARNING', label: 'Warning', fill: '#fbe9c6', stroke: '#d9901a' },
  CRITICAL: { key: 'CRITICAL', label: 'Critical', fill: '#f8d2d4', stroke: '#d1343a' },
  FATAL: { key: 'FATAL', label: 'Fatal', fill: '#8f1d22', stroke: '#5c0f13' },
};

/** The swatch of the worst open alert (null: none). */
export function alertSwatch(worst: string | null | undefined): Swatch {
  return (worst && alertSwatches[worst]) || alertSwatches.none;
}

/**
 * Device roles as NetBox colours them: network gear by its fabric role (the API's HostRole),
 * other devices by kind. VirtFlow's roles are a fixed enum, so the palette is fixed here rather
 * than a colour field per role; fills are light so the device name stays readable.
 */
export const roleSwatches: Record<string, Swatch> = {
  GATEWAY_ROUTER: { key: 'GATEWAY_ROUTER', label: 'Gateway router', fill: '#f6d5e6', stroke: '#b0306f' },
  FLOOR_SPINE: { key: 'FLOOR_SPINE', label: 'Floor spine', fill: '#e3d9f7', stroke: '#6a3fc0' },
  FLOOR_LEAF: { key: 'FLOOR_LEAF', label: 'Floor leaf', fill: '#d6e4fb', stroke: '#2d62c4' },
  RACK_SPINE: { key: 'RACK_SPINE', label: 'Rack spine', fill: '#cfeef3', stroke: '#137a8c' },
  RACK_LEAF: { key: 'RACK_LEAF', label: 'Rack leaf', fill: '#d3f0dd', stroke: '#1f8a4c' },
  SERVER: { key: 'SERVER', label: 'Server', fill: '#e9edf2', stroke: '#5b6b80' },
  SWITCH: { key: 'SWITCH', label: 'Switch (no role)', fill: '#dff3f0', stroke: '#2c8f80' },
  ROUTER: { key: 'ROUTER', label: 'Router (no role)', fill: '#f9e0d9', stroke: '#b5502d' },
  PDU: { key: 'PDU', label: 'PDU', fill: '#fbefc9', stroke: '#a87a00' },
  OTHER: { key: 'OTHER', label: 'Other', fill: '#eeeeee', stroke: '#777777' },
};

/** The swatch of a device by its role, or by its kind when it has no role. */
export function roleSwatch(d: { role?: string | null; kind: string }): Swatch {
  return (d.role && roleSwatches[d.role]) || roleSwatches[d.kind] || roleSwatches.OTHER;
}
