// Rack occupancy: the share of a rack's units holding a device on at least one face. A unit
// shared by a front and a rear half-depth device counts once. Pure code: see occupancy.test.ts.
import { facesOf, type RackDevice } from './layout';

export interface Occupancy {
  usedUnits: number;
  freeUnits: number;
  /** 0..1 */
  fraction: number;
  /** 0..100, rounded */
  percent: number;
}

/** Occupancy of a rackHeight-unit rack from its devices (unmounted ones and units outside the rack are not counted). */
export function occupancy(rackHeight: number, devices: readonly RackDevice[]): Occupancy {
  const used = new Set<number>();
  for (const d of devices) {
    if (d.position === null || d.position === undefined || facesOf(d).length === 0) continue;
    const h = Math.max(1, d.height || 1);
    for (let u = d.position; u < d.position + h; u++) if (u >= 1 && u <= rackHeight) used.add(u);
  }
  return fromCounts(used.size, rackHeight);
}

/** Occupancy from used units and height (what floorView reports). */
export function fromCounts(usedUnits: number, rackHeight: number): Occupancy {
  const h = Math.max(0, rackHeight);
  const u = Math.min(Math.max(0, usedUnits), h);
  const fraction = h > 0 ? u / h : 0;
  return { usedUnits: u, freeUnits: h - u, fraction, percent: Math.round(fraction * 100) };
}
