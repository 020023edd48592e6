import { describe, expect, it } from 'vitest';
import { layoutRack, shortDeviceName, unitNumbers, unitRange, type RackDevice } from './layout';

const dev = (id: string, position: number | null, height = 1, face: 'FRONT' | 'REAR' = 'FRONT', fullDepth = true): RackDevice => ({
  id,
  name: `dev-${id}`,
  position,
  height,
  face,
  fullDepth,
});

describe('layoutRack', () => {
  it('puts U1 at the bottom and the top unit at y=0 in a 42U rack', () => {
    const l = layoutRack(42, [dev('bottom', 1), dev('top', 42)], 10);
    expect(l.pixelHeight).toBe(420);
    const bottom = l.front.find((r) => r.device.id === 'bottom')!;
    const top = l.front.find((r) => r.device.id === 'top')!;
    expect(bottom.y).toBe(410);
    expect(bottom.height).toBe(10);
    expect(top.y).toBe(0);
    expect(l.ignored).toEqual([]);
    expect(l.overlaps).toEqual([]);
  });

  it('handles a 48U rack: the top unit is 48', () => {
    const l = layoutRack(48, [dev('top', 47, 2)], 10);
    expect(l.pixelHeight).toBe(480);
    expect(l.front[0].y).toBe(0);
    expect(l.front[0].topUnit).toBe(48);
    expect(l.front[0].bottomUnit).toBe(47);
  });

  it('draws a 2U device over two units, its top at its highest unit', () => {
    const l = layoutRack(42, [dev('a', 5, 2)], 16);
    const r = l.front[0];
    expect(r.height).toBe(32);
    expect(r.y).toBe((42 - 6) * 16);
    expect(r.topUnit).toBe(6);
  });

  it('draws a full-depth device on both faces, primary on its own face', () => {
    const l = layoutRack(42, [dev('a', 3, 1, 'REAR', true)]);
    expect(l.front).toHaveLength(1);
    expect(l.rear).toHaveLength(1);
    expect(l.rear[0].primary).toBe(true);
    expect(l.front[0].primary).toBe(false);
  });

  it('lets a front and a rear half-depth device share a unit without overlap', () => {
    const l = layoutRack(42, [dev('f', 10, 1, 'FRONT', false), dev('r', 10, 1, 'REAR', false)]);
    expect(l.front.map((r) => r.device.id)).toEqual(['f']);
    expect(l.rear.map((r) => r.device.id)).toEqual(['r']);
    expect(l.overlaps).toEqual([]);
  });

  it('flags a half-depth device overlapping a full-depth one on its face', () => {
    const l = layoutRack(42, [dev('full', 10, 2), dev('half', 11, 1, 'REAR', false)]);
    expect(l.overlaps).toEqual([{ face: 'REAR', unit: 11, deviceIDs: ['full', 'half'] }]);
    expect(l.rear.every((r) => r.overlaps)).toBe(true);
    expect(l.front.every((r) => !r.overlaps)).toBe(true);
  });

  it('flags two devices on the same units of the same face', () => {
    const l = layoutRack(42, [dev('a', 20, 2, 'FRONT', false), dev('b', 21, 1, 'FRONT', false)]);
    expect(l.overlaps).toEqual([{ face: 'FRONT', unit: 21, deviceIDs: ['a', 'b'] }]);
    expect(l.front.filter((r) => r.overlaps)).toHaveLength(2);
  });

  it('lays out an empty rack', () => {
    const l = layoutRack(42, []);
    expect(l.front).toEqual([]);
    expect(l.rear).toEqual([]);
    expect(l.ignored).toEqual([]);
  });

  it('ignores and reports a device without position, and one reaching out of the rack', () => {
    const l = layoutRack(42, [dev('nopos', null), dev('ok', 1), dev('high', 42, 2), dev('zero', 0)]);
    expect(l.front.map((r) => r.device.id)).toEqual(['ok']);
    expect(l.ignored.map((i) => [i.device.id, i.reason])).toEqual([
      ['nopos', 'no-position'],
      ['high', 'out-of-rack'],
      ['zero', 'out-of-rack'],
    ]);
  });

  it('sorts each face from the top down', () => {
    const l = layoutRack(42, [dev('a', 1), dev('b', 30), dev('c', 12, 2)]);
    expect(l.front.map((r) => r.device.id)).toEqual(['b', 'c', 'a']);
  });
});

describe('helpers', () => {
  it('numbers units from the top down', () => {
    expect(unitNumbers(3)).toEqual([3, 2, 1]);
    expect(unitNumbers(48)[0]).toBe(48);
    expect(unitNumbers(0)).toEqual([]);
  });
  it('shortens demo names after the rack name', () => {
    expect(shortDeviceName('tky1-dc1-floor-1-1-1-rack-1-1-server01', 'rack-1-1')).toBe('server01');
    expect(shortDeviceName('other', 'rack-1-1')).toBe('other');
    expect(shortDeviceName('x', null)).toBe('x');
  });
  it('writes unit ranges', () => {
    expect(unitRange(7, 1)).toBe('U7');
    expect(unitRange(7, 2)).toBe('U7–U8');
    expect(unitRange(null, 2)).toBe('not mounted');
  });
});
