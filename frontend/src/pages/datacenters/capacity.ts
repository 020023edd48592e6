// Sums of capacity over floors (datacenter totals on the datacenters pages).
export interface CapacitySums {
  racks: number;
  usedUnits: number;
  totalUnits: number;
  hosts: number;
  nodes: number;
  readyNodes: number;
  cpuCapacity: number;
  cpuAllocated: number;
  memoryCapacityMB: number;
  memoryAllocatedMB: number;
}

interface FloorLike {
  racks: number;
  usedUnits: number;
  totalUnits: number;
  hosts: number;
  capacity: { nodes: number; readyNodes: number; cpuCapacity: number; cpuAllocated: number; memoryCapacityMB: number; memoryAllocatedMB: number };
}

/** The totals of floors. */
export function sumFloors(floors: readonly FloorLike[]): CapacitySums {
  const s: CapacitySums = { racks: 0, usedUnits: 0, totalUnits: 0, hosts: 0, nodes: 0, readyNodes: 0, cpuCapacity: 0, cpuAllocated: 0, memoryCapacityMB: 0, memoryAllocatedMB: 0 };
  for (const f of floors) {
    s.racks += f.racks;
    s.usedUnits += f.usedUnits;
    s.totalUnits += f.totalUnits;
    s.hosts += f.hosts;
    s.nodes += f.capacity.nodes;
    s.readyNodes += f.capacity.readyNodes;
    s.cpuCapacity += f.capacity.cpuCapacity;
    s.cpuAllocated += f.capacity.cpuAllocated;
    s.memoryCapacityMB += f.capacity.memoryCapacityMB;
    s.memoryAllocatedMB += f.capacity.memoryAllocatedMB;
  }
  return s;
}
