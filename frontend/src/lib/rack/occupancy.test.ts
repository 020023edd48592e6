import { describe, expect, it } from 'vitest';
import { fromCounts, occupancy } from './occupancy';
import type { RackDevice } from './layout';

const dev = (id: string, position: number | null, height = 1, face: 'FRONT' | 'REAR' = 'FRONT', fullDepth = true): RackDevice => ({
  id, name: id, position, height, face, fullDepth,
});

describe('occupancy', () => {
  it('is zero for an empty rack', () => {
    expect(occupancy(42, [])).toEqual({ usedUnits: 0, freeUnits: 42, fraction: 0, percent: 0 });
  });
  it('counts each unit of a 2U device', () => {
    expect(occupancy(42, [dev('a', 1, 2), dev('b', 41, 2)]).usedUnits).toBe(4);
  });
  it('counts a unit shared by front and rear half-depth devices once', () => {
    const o = occupancy(42, [dev('f', 10, 1, 'FRONT', false), dev('r', 10, 1, 'REAR', false)]);
    expect(o.usedUnits).toBe(1);
    expect(o.freeUnits).toBe(41);
  });
  it('fills a 48U rack to 100 %', () => {
    const devs = Array.from({ length: 24 }, (_, i) => dev(String(i), i * 2 + 1, 2));
    expect(occupancy(48, devs)).toEqual({ usedUnits: 48, freeUnits: 0, fraction: 1, percent: 100 });
  });
  it('ignores unmounted devices and units outside the rack', () => {
    expect(occupancy(42, [dev('n', null, 4), dev('top', 42, 2)]).usedUnits).toBe(1);
  });
  it('rounds the percentage', () => {
    expect(occupancy(42, [dev('a', 1, 30)]).percent).toBe(71);
  });
});

describe('fromCounts', () => {
  it('clamps and handles a zero-height rack', () => {
    expect(fromCounts(50, 42).usedUnits).toBe(42);
    expect(fromCounts(3, 0)).toEqual({ usedUnits: 0, freeUnits: 0, fraction: 0, percent: 0 });
  });
});
