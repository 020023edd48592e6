// Capacity arithmetic for the overview: summing the Capacity of clusters into a datacenter and
// datacenters into a region, and the used/free split shown on the page.

/** The fields of the API's Capacity type the overview uses. */
export interface Cap {
  nodes: number;
  readyNodes: number;
  cpuCapacity: number;
  cpuAllocated: number;
  memoryCapacityMB: number;
  memoryAllocatedMB: number;
  diskCapacityGB: number;
  diskAllocatedGB: number;
}

/** A capacity of nothing. */
export const emptyCap = (): Cap => ({
  nodes: 0, readyNodes: 0, cpuCapacity: 0, cpuAllocated: 0,
  memoryCapacityMB: 0, memoryAllocatedMB: 0, diskCapacityGB: 0, diskAllocatedGB: 0,
});

/** The field-by-field sum of caps. */
export function sumCaps(caps: readonly Cap[]): Cap {
  const s = emptyCap();
  for (const c of caps) {
    s.nodes += c.nodes;
    s.readyNodes += c.readyNodes;
    s.cpuCapacity += c.cpuCapacity;
    s.cpuAllocated += c.cpuAllocated;
    s.memoryCapacityMB += c.memoryCapacityMB;
    s.memoryAllocatedMB += c.memoryAllocatedMB;
    s.diskCapacityGB += c.diskCapacityGB;
    s.diskAllocatedGB += c.diskAllocatedGB;
  }
  return s;
}

/** Free = capacity − allocated, never below zero (over-commit shows as 0 free). */
export function free(capacity: number, allocated: number): number {
  return Math.max(0, capacity - allocated);
}

/** A datacenter's capacity, once its view has loaded. */
export interface DatacenterCap {
  id: string;
  regionId: string;
  cap: Cap;
}

/** Sums the datacenters of each region: region id → capacity (regions with no loaded datacenter are absent). */
export function capsByRegion(dcs: readonly DatacenterCap[]): Map<string, Cap> {
  const groups = new Map<string, Cap[]>();
  for (const d of dcs) {
    const g = groups.get(d.regionId) ?? [];
    g.push(d.cap);
    groups.set(d.regionId, g);
  }
  return new Map([...groups].map(([k, v]) => [k, sumCaps(v)]));
}
