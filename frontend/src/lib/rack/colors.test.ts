import { describe, expect, it } from 'vitest';
import { alertSwatch, nodeSwatch, occupancySwatch, roleSwatch, roleSwatches, textOn } from './colors';

describe('nodeSwatch', () => {
  it('colours by node state', () => {
    expect(nodeSwatch({ status: 'READY', cordoned: false }).key).toBe('ready');
    expect(nodeSwatch({ status: 'NOT_READY', cordoned: false }).key).toBe('not-ready');
    expect(nodeSwatch({ status: 'DOWN', cordoned: false }).key).toBe('down');
    expect(nodeSwatch({ status: 'UNKNOWN', cordoned: false }).key).toBe('unknown');
    expect(nodeSwatch(null).key).toBe('none');
  });
  it('shows cordoned over ready, but down over cordoned', () => {
    expect(nodeSwatch({ status: 'READY', cordoned: true }).key).toBe('cordoned');
    expect(nodeSwatch({ status: 'DOWN', cordoned: true }).key).toBe('down');
  });
});

describe('occupancySwatch', () => {
  it('bands fractions', () => {
    expect(occupancySwatch(0).key).toBe('empty');
    expect(occupancySwatch(0.1).key).toBe('low');
    expect(occupancySwatch(0.25).key).toBe('mid');
    expect(occupancySwatch(30 / 42).key).toBe('high');
    expect(occupancySwatch(0.8).key).toBe('higher');
    expect(occupancySwatch(1).key).toBe('full');
  });
  it('clamps odd values', () => {
    expect(occupancySwatch(-1).key).toBe('empty');
    expect(occupancySwatch(7).key).toBe('full');
    expect(occupancySwatch(NaN).key).toBe('empty');
  });
  it('picks readable text', () => {
    expect(textOn(occupancySwatch(1))).toBe('#ffffff');
    expect(textOn(occupancySwatch(0.1))).toBe('#1d2430');
  });
});

describe('alertSwatch', () => {
  it('colours by worst open alert', () => {
    expect(alertSwatch(null).key).toBe('none');
    expect(alertSwatch('WARNING').key).toBe('WARNING');
    expect(alertSwatch('CRITICAL').key).toBe('CRITICAL');
    expect(alertSwatch('FATAL').key).toBe('FATAL');
    expect(textOn(alertSwatch('FATAL'))).toBe('#ffffff');
  });
});

describe('roleSwatch', () => {
  it('colours network gear by role and other devices by kind', () => {
    expect(roleSwatch({ role: 'RACK_LEAF', kind: 'SWITCH' }).key).toBe('RACK_LEAF');
    expect(roleSwatch({ role: null, kind: 'SWITCH' }).key).toBe('SWITCH');
    expect(roleSwatch({ kind: 'PDU' }).key).toBe('PDU');
    expect(roleSwatch({ kind: 'SPACESHIP' }).key).toBe('OTHER');
  });
  it('keeps every fill readable with dark text', () => {
    for (const s of Object.values(roleSwatches)) expect(textOn(s)).toBe('#1d2430');
  });
});
