import { describe, expect, it } from 'vitest';
import { bestSwap, findSatellites, gridColumns, gridPositions } from './layout';

describe('findSatellites', () => {
  const ids = ['hub', 'core', 'a', 'b', 'c', 'd', 'start'];
  const links = [
    { source: 'hub', target: 'core' },
    ...['a', 'b', 'c', 'start'].map((s) => ({ source: s, target: 'hub' })),
    { source: 'd', target: 'hub' },
    { source: 'd', target: 'core' },
  ];
  it('collects single-neighbour nodes by hub, except the kept node and multi-homed ones', () => {
    expect(findSatellites(ids, links, 2, 'start')).toEqual(new Map([['hub', ['a', 'b', 'c']]]));
  });
  it('ignores hubs with fewer than min satellites', () => {
    expect(findSatellites(ids, links, 5).size).toBe(0);
  });
  it('does not treat an isolated pair as hub and satellite', () => {
    expect(findSatellites(['x', 'y'], [{ source: 'x', target: 'y' }], 1).size).toBe(0);
  });
});

describe('gridPositions', () => {
  it('fills centred rows', () => {
    expect(gridPositions(5, 0, 100, 10, 20, 3)).toEqual([
      { x: -10, y: 100 }, { x: 0, y: 100 }, { x: 10, y: 100 },
      { x: -5, y: 120 }, { x: 5, y: 120 },
    ]);
  });
  it('chooses columns wider than tall, capped', () => {
    expect(gridColumns(1)).toBe(1);
    expect(gridColumns(18)).toBe(6);
    expect(gridColumns(1000)).toBe(16);
  });
});

describe('bestSwap', () => {
  it('moves the start under the middle of its neighbours', () => {
    expect(bestSwap([0, 100, 200, 300, 400], 0, [250, 350])).toBe(3);
    expect(bestSwap([0, 100, 200], 1, [90])).toBe(1);
    expect(bestSwap([0, 100], 0, [])).toBe(0);
  });
});
