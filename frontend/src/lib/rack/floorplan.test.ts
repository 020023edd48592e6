import { describe, expect, it } from 'vitest';
import { compareRows, defaultGeometry as g, layoutFloor } from './floorplan';

interface R { name: string; row?: string | null; position?: number | null }
const place = (r: R) => r;

describe('layoutFloor', () => {
  it('places racks by row and position', () => {
    const l = layoutFloor<R>([
      { name: 'b', row: '1', position: 2 },
      { name: 'a', row: '1', position: 1 },
      { name: 'c', row: '2', position: 4 },
    ], place);
    expect(l.rows).toEqual(['1', '2']);
    expect(l.columns).toBe(4);
    expect(l.placed.map((p) => p.rack.name)).toEqual(['a', 'b', 'c']);
    const c = l.placed[2];
    expect(c.x).toBe(g.left + 3 * (g.rackWidth + g.gapX));
    expect(c.y).toBe(g.top + g.rowPitch);
  });
  it('orders rows naturally', () => {
    expect(['10', '2', '1'].sort(compareRows)).toEqual(['1', '2', '10']);
    const l = layoutFloor<R>([{ name: 'x', row: '10', position: 1 }, { name: 'y', row: '2', position: 1 }], place);
    expect(l.rows).toEqual(['2', '10']);
  });
  it('lists racks without row or position apart', () => {
    const l = layoutFloor<R>([{ name: 'x', row: '', position: 1 }, { name: 'y', row: 'A', position: null }, { name: 'z', row: 'A', position: 1 }], place);
    expect(l.unplaced.map((r) => r.name)).toEqual(['x', 'y']);
    expect(l.placed).toHaveLength(1);
  });
  it('handles an empty floor', () => {
    const l = layoutFloor<R>([], place);
    expect(l.rows).toEqual([]);
    expect(l.placed).toEqual([]);
    expect(l.columns).toBe(0);
  });
});
