// Rack elevation layout: maps the API's devices to rectangles per face of the rack (front and
// rear), unit by unit, with U1 at the bottom. Pure code, no React: see layout.test.ts.
//
// A full-depth device blocks both faces of its units and is drawn on both; a half-depth device
// only on its own face, so a front and a rear half-depth device may share a unit. Devices
// without a position (not mounted) or reaching outside the rack are left out and reported;
// two devices claiming the same unit of the same face are drawn but flagged as overlapping.

export type Face = 'FRONT' | 'REAR';

/** What the layout needs of a device (ElevationDevice fits). */
export interface RackDevice {
  id: string;
  name: string;
  /** lowest unit the device occupies (1 = bottom); null when not mounted */
  position?: number | null;
  height: number;
  face: Face;
  fullDepth: boolean;
}

/** One device drawn on one face. */
export interface DeviceRect<D extends RackDevice = RackDevice> {
  device: D;
  face: Face;
  /** true on the device's own face, false on the far face of a full-depth device */
  primary: boolean;
  /** lowest and highest unit */
  bottomUnit: number;
  topUnit: number;
  /** pixels from the top of the rack's unit area */
  y: number;
  height: number;
  /** another device claims one of these units on this face */
  overlaps: boolean;
}

/** A device the layout could not place, and why. */
export interface IgnoredDevice<D extends RackDevice = RackDevice> {
  device: D;
  reason: 'no-position' | 'out-of-rack';
}

/** Two devices claiming the same unit of the same face. */
export interface Overlap {
  face: Face;
  unit: number;
  deviceIDs: string[];
}

export interface RackLayout<D extends RackDevice = RackDevice> {
  rackHeight: number;
  unitPx: number;
  /** the unit area's height in pixels */
  pixelHeight: number;
  front: DeviceRect<D>[];
  rear: DeviceRect<D>[];
  ignored: IgnoredDevice<D>[];
  overlaps: Overlap[];
}

/** The faces a device occupies. */
export function facesOf(d: RackDevice): Face[] {
  if (d.fullDepth) return d.face === 'REAR' ? ['REAR', 'FRONT'] : ['FRONT', 'REAR'];
  return [d.face];
}

/** Pixels from the top of a rackHeight-unit rack to the top of a device whose highest unit is topUnit. */
export function unitTop(rackHeight: number, topUnit: number, unitPx: number): number {
  return (rackHeight - topUnit) * unitPx;
}

/** Lays out devices in a rack of rackHeight units drawn unitPx pixels per unit. */
export function layoutRack<D extends RackDevice>(rackHeight: number, devices: readonly D[], unitPx = 16): RackLayout<D> {
  const out: RackLayout<D> = { rackHeight, unitPx, pixelHeight: rackHeight * unitPx, front: [], rear: [], ignored: [], overlaps: [] };
  // who claims each unit of each face
  const claims: Record<Face, Map<number, string[]>> = { FRONT: new Map(), REAR: new Map() };
  const placed: D[] = [];
  for (const d of devices) {
    const pos = d.position;
    if (pos === null || pos === undefined || !Number.isFinite(pos)) {
      out.ignored.push({ device: d, reason: 'no-position' });
      continue;
    }
    const h = Math.max(1, d.height || 1);
    if (pos < 1 || pos + h - 1 > rackHeight) {
      out.ignored.push({ device: d, reason: 'out-of-rack' });
      continue;
    }
    placed.push(d);
    for (const f of facesOf(d)) {
      for (let u = pos; u < pos + h; u++) {
        const list = claims[f].get(u) ?? [];
        list.push(d.id);
        claims[f].set(u, list);
      }
    }
  }
  const overlapping: Record<Face, Set<string>> = { FRONT: new Set(), REAR: new Set() };
  for (const f of ['FRONT', 'REAR'] as Face[]) {
    const units = [...claims[f].keys()].sort((a, b) => b - a);
    for (const u of units) {
      const ids = claims[f].get(u)!;
      if (ids.length > 1) {
        out.overlaps.push({ face: f, unit: u, deviceIDs: [...ids] });
        ids.forEach((id) => overlapping[f].add(id));
      }
    }
  }
  for (const d of placed) {
    const pos = d.position as number;
    const h = Math.max(1, d.height || 1);
    const top = pos + h - 1;
    facesOf(d).forEach((f, i) => {
      const r: DeviceRect<D> = {
        device: d,
        face: f,
        primary: i === 0,
        bottomUnit: pos,
        topUnit: top,
        y: unitTop(rackHeight, top, unitPx),
        height: h * unitPx,
        overlaps: overlapping[f].has(d.id),
      };
      (f === 'FRONT' ? out.front : out.rear).push(r);
    });
  }
  const byTop = (a: DeviceRect<D>, b: DeviceRect<D>) => b.topUnit - a.topUnit;
  out.front.sort(byTop);
  out.rear.sort(byTop);
  return out;
}

/** Units numbered from the top of the rack down to 1, as drawn. */
export function unitNumbers(rackHeight: number): number[] {
  return Array.from({ length: Math.max(0, rackHeight) }, (_, i) => rackHeight - i);
}

/** A device's name without the datacenter/floor/rack prefix the demo's names carry. */
export function shortDeviceName(name: string, rackName?: string | null): string {
  if (rackName) {
    const marker = `${rackName}-`;
    const i = name.lastIndexOf(marker);
    if (i >= 0 && i + marker.length < name.length) return name.slice(i + marker.length);
  }
  return name;
}

/** "U7" or "U7–U8". */
export function unitRange(position: number | null | undefined, height: number): string {
  if (position === null || position === undefined) return 'not mounted';
  const top = position + Math.max(1, height) - 1;
  return top === position ? `U${position}` : `U${position}–U${top}`;
}
