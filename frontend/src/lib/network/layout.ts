// Layout helpers for the network map that ELK does not do well on its own: a hub with a great
// many single-link neighbours (every server on the management network) is laid out by ELK
// without them, and they are then packed in a grid below the hub instead of one endless row.

export interface Link {
  source: string;
  target: string;
}

/**
 * Satellites by hub: nodes whose every edge goes to one and the same neighbour (the hub), for
 * hubs with at least min of them. keep (e.g. the start node) is never a satellite.
 */
export function findSatellites(ids: string[], links: Link[], min = 12, keep?: string): Map<string, string[]> {
  const neighbours = new Map<string, Set<string>>();
  for (const id of ids) neighbours.set(id, new Set());
  for (const l of links) {
    if (l.source === l.target) continue;
    neighbours.get(l.source)?.add(l.target);
    neighbours.get(l.target)?.add(l.source);
  }
  const byHub = new Map<string, string[]>();
  for (const id of ids) {
    const ns = neighbours.get(id)!;
    if (id === keep || ns.size !== 1) continue;
    const [hub] = ns;
    // two nodes joined only to each other are a pair, not a hub and its satellite
    if ((neighbours.get(hub)?.size ?? 0) <= 1) continue;
    byHub.set(hub, [...(byHub.get(hub) ?? []), id]);
  }
  for (const [hub, sats] of byHub) if (sats.length < min) byHub.delete(hub);
  return byHub;
}

export interface Point {
  x: number;
  y: number;
}

/**
 * Centres of count cells in rows of at most columns, the block centred on x with its first
 * row's centres at y, cells cellW × cellH apart.
 */
export function gridPositions(count: number, x: number, y: number, cellW: number, cellH: number, columns: number): Point[] {
  const cols = Math.max(1, Math.min(columns, count));
  const out: Point[] = [];
  for (let i = 0; i < count; i++) {
    const row = Math.floor(i / cols);
    const col = i % cols;
    const inRow = Math.min(cols, count - row * cols);
    out.push({ x: x + (col - (inRow - 1) / 2) * cellW, y: y + row * cellH });
  }
  return out;
}

/** A pleasant number of grid columns for count cells: about twice as wide as tall, capped. */
export function gridColumns(count: number, max = 16): number {
  return Math.max(1, Math.min(max, count, Math.ceil(Math.sqrt(count * 2))));
}

/**
 * Which node of the start's layer to swap the start with so it sits under the middle of its
 * neighbours: the row's x positions, the start's index in them and the neighbours' x. Returns
 * the index to swap with (the start's own index when it is already best placed).
 */
export function bestSwap(rowX: number[], startIndex: number, neighbourX: number[]): number {
  if (neighbourX.length === 0 || rowX.length < 2) return startIndex;
  const target = neighbourX.reduce((a, b) => a + b, 0) / neighbourX.length;
  let best = startIndex;
  for (let i = 0; i < rowX.length; i++) {
    if (Math.abs(rowX[i] - target) < Math.abs(rowX[best] - target)) best = i;
  }
  return best;
}
