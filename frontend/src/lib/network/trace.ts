// Groups a path trace's hops into levels for the vertical chain: level 1 leaves the start host,
// each higher level climbs one tier; within a level the hops are grouped by the device they
// leave, so branching (several uplinks) shows as one device with several links.
import type { PathHop } from './types';

export interface HopGroup {
  fromHostID: string;
  fromHostName: string;
  hops: PathHop[];
}

export interface TraceLevel {
  level: number;
  /** the fabric roles reached at this level, e.g. ["RACK_SPINE"] */
  roles: string[];
  /** distinct devices reached */
  reached: { id: string; name: string; role?: string | null }[];
  groups: HopGroup[];
}

/** The hops by level (ascending), grouped by the device they leave, in the API's order. */
export function groupHops(hops: PathHop[]): TraceLevel[] {
  const levels = new Map<number, TraceLevel>();
  for (const h of hops) {
    let lv = levels.get(h.level);
    if (!lv) {
      lv = { level: h.level, roles: [], reached: [], groups: [] };
      levels.set(h.level, lv);
    }
    if (h.toRole && !lv.roles.includes(h.toRole)) lv.roles.push(h.toRole);
    if (!lv.reached.some((r) => r.id === h.toHostID)) lv.reached.push({ id: h.toHostID, name: h.toHostName, role: h.toRole });
    let g = lv.groups.find((x) => x.fromHostID === h.fromHostID);
    if (!g) {
      g = { fromHostID: h.fromHostID, fromHostName: h.fromHostName, hops: [] };
      lv.groups.push(g);
    }
    g.hops.push(h);
  }
  return [...levels.values()].sort((a, b) => a.level - b.level);
}

/** The number of distinct upward paths from the start to the top level (1 without branching). */
export function pathCount(hops: PathHop[]): number {
  const levels = groupHops(hops);
  if (levels.length === 0) return 0;
  // paths to each device, climbing level by level
  let paths = new Map<string, number>();
  for (const g of levels[0].groups) for (const h of g.hops) paths.set(h.toHostID, (paths.get(h.toHostID) ?? 0) + 1);
  for (const lv of levels.slice(1)) {
    const next = new Map<string, number>();
    for (const g of lv.groups) {
      const into = paths.get(g.fromHostID) ?? 0;
      for (const h of g.hops) next.set(h.toHostID, (next.get(h.toHostID) ?? 0) + into);
    }
    paths = next;
  }
  return [...paths.values()].reduce((a, b) => a + b, 0);
}
