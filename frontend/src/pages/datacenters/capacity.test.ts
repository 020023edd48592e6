import { describe, expect, it } from 'vitest';
import { sumFloors } from './capacity';

const floor = (n: number) => ({
  racks: n, usedUnits: 10 * n, totalUnits: 42 * n, hosts: 3 * n,
  capacity: { nodes: n, readyNodes: n - 1, cpuCapacity: 64 * n, cpuAllocated: n, memoryCapacityMB: 1024 * n, memoryAllocatedMB: 512 * n },
});

describe('sumFloors', () => {
  it('adds up floors', () => {
    expect(sumFloors([floor(1), floor(2)])).toEqual({
      racks: 3, usedUnits: 30, totalUnits: 126, hosts: 9, nodes: 3, readyNodes: 1,
      cpuCapacity: 192, cpuAllocated: 3, memoryCapacityMB: 3072, memoryAllocatedMB: 1536,
    });
  });
  it('is zero without floors', () => {
    expect(sumFloors([]).totalUnits).toBe(0);
  });
});
