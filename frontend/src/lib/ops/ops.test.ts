import { describe, expect, it } from 'vitest';
import { capsByRegion, emptyCap, free, sumCaps, type Cap } from './capacity';
import { relativeTime, mb, gb, toLocalInput, fromLocalInput } from './format';
import { resourcePath, typeLabel } from './resources';
import { expiryFromDays, tokenState } from './tokens';
import { drainProgress, schedulingLabel } from './drain';

const cap = (cpu: number, alloc: number, nodes = 1): Cap => ({ ...emptyCap(), nodes, readyNodes: nodes, cpuCapacity: cpu, cpuAllocated: alloc, memoryCapacityMB: cpu * 1024, memoryAllocatedMB: alloc * 1024 });

describe('capacity', () => {
  it('sums every field', () => {
    const s = sumCaps([cap(10, 2), cap(20, 5, 3)]);
    expect(s.nodes).toBe(4);
    expect(s.cpuCapacity).toBe(30);
    expect(s.cpuAllocated).toBe(7);
    expect(s.memoryAllocatedMB).toBe(7 * 1024);
    expect(sumCaps([])).toEqual(emptyCap());
  });
  it('groups datacenters by region', () => {
    const m = capsByRegion([
      { id: 'd1', regionId: 'r1', cap: cap(10, 1) },
      { id: 'd2', regionId: 'r1', cap: cap(5, 4) },
      { id: 'd3', regionId: 'r2', cap: cap(7, 0) },
    ]);
    expect(m.get('r1')!.cpuCapacity).toBe(15);
    expect(m.get('r1')!.cpuAllocated).toBe(5);
    expect(m.get('r2')!.cpuCapacity).toBe(7);
    expect(m.has('r3')).toBe(false);
  });
  it('never reports negative free capacity', () => {
    expect(free(10, 4)).toBe(6);
    expect(free(10, 12)).toBe(0);
  });
});

describe('format', () => {
  const now = Date.parse('2026-11-21T12:00:00Z');
  it('says how long ago', () => {
    expect(relativeTime('2026-11-21T11:59:58Z', now)).toBe('just now');
    expect(relativeTime('2026-11-21T11:59:30Z', now)).toBe('30 s ago');
    expect(relativeTime('2026-11-21T11:55:00Z', now)).toBe('5 min ago');
    expect(relativeTime('2026-11-21T09:00:00Z', now)).toBe('3 h ago');
    expect(relativeTime('2026-11-19T12:00:00Z', now)).toBe('2 d ago');
    expect(relativeTime('2026-11-21T14:00:00Z', now)).toBe('in 2 h');
    expect(relativeTime(null, now)).toBe('—');
    expect(relativeTime('garbage', now)).toBe('—');
  });
  it('sizes memory and disk', () => {
    expect(mb(512)).toBe('512 MB');
    expect(mb(65536)).toBe('64 GiB');
    expect(mb(1536)).toBe('1.5 GiB');
    expect(mb(44040192)).toBe('42 TiB');
    expect(gb(500)).toBe('500 GB');
    expect(gb(2048)).toBe('2 TiB');
  });
});

describe('resources', () => {
  it('links known types and not others', () => {
    expect(resourcePath('ComputeNode', 25769803777)).toBe('/nodes/25769803777');
    expect(resourcePath('VirtualMachine', '12')).toBe('/vms/12');
    expect(resourcePath('Assignment', 5)).toBeNull();
    expect(resourcePath('Host', 0)).toBeNull();
    expect(resourcePath(null, 3)).toBeNull();
  });
  it('names types for people', () => {
    expect(typeLabel('ComputeNode')).toBe('compute node');
    expect(typeLabel('APIToken')).toBe('API token');
  });
});

describe('tokens', () => {
  const now = Date.parse('2026-11-21T12:00:00Z');
  it('knows revoked, expired and active tokens', () => {
    expect(tokenState({ revokedAt: '2026-11-20T00:00:00Z' }, now)).toBe('REVOKED');
    expect(tokenState({ expiresAt: '2026-11-21T11:00:00Z' }, now)).toBe('EXPIRED');
    expect(tokenState({ expiresAt: '2026-11-22T11:00:00Z' }, now)).toBe('ACTIVE');
    expect(tokenState({}, now)).toBe('ACTIVE');
  });
  it('turns days into an expiry', () => {
    expect(expiryFromDays(1, now)).toBe('2026-11-22T12:00:00.000Z');
    expect(expiryFromDays(0, now)).toBeNull();
    expect(expiryFromDays(NaN, now)).toBeNull();
  });
});

describe('drain', () => {
  const now = Date.parse('2026-11-21T12:00:00Z');
  it('reports progress while draining', () => {
    const p = drainProgress({ drainState: 'DRAINING', drainMessage: 'moving 3 VMs', drainDeadline: '2026-11-21T12:10:00Z' }, now);
    expect(p).toEqual({ state: 'DRAINING', active: true, message: 'moving 3 VMs', secondsLeft: 600 });
  });
  it('treats an empty drain state as never drained', () => {
    expect(drainProgress({ drainState: '' }, now)).toEqual({ state: null, active: false, message: '', secondsLeft: null });
  });
  it('labels scheduling', () => {
    expect(schedulingLabel({ schedulable: true })).toBe('SCHEDULABLE');
    expect(schedulingLabel({ schedulable: false })).toBe('CORDONED');
    expect(schedulingLabel({ schedulable: false, drainState: 'DRAINING' })).toBe('DRAINING');
  });
});

import { overlay } from './live';
describe('live overlay', () => {
  it('lays newer live fields over the loaded row', () => {
    const base = { id: '1', status: 'READY', name: 'n1', updatedAt: '2026-11-21T12:00:00Z' };
    expect(overlay(base, { status: 'DOWN', updatedAt: '2026-11-21T12:00:05Z' })).toEqual({ ...base, status: 'DOWN', updatedAt: '2026-11-21T12:00:05Z' });
  });
  it('keeps the loaded row when the event is older', () => {
    const base = { id: '1', schedulable: false, updatedAt: '2026-11-21T12:00:10Z' };
    expect(overlay(base, { schedulable: true, updatedAt: '2026-11-21T12:00:05Z' })).toBe(base);
    expect(overlay(base, undefined)).toBe(base);
  });
});

import { windowStart } from './window';
describe('time windows', () => {
  const now = Date.parse('2026-11-21T12:00:30Z');
  it('starts a window whole minutes back', () => {
    expect(windowStart('1h', now)).toBe('2026-11-21T11:00:00.000Z');
    expect(windowStart('7d', now)).toBe('2026-11-14T12:00:00.000Z');
  });
  it('has no start for any time', () => {
    expect(windowStart('', now)).toBeUndefined();
    expect(windowStart('bogus', now)).toBeUndefined();
  });
});

describe('datetime-local inputs', () => {
  it('round-trips a time to the minute in the browser zone', () => {
    const d = new Date(2030, 0, 2, 3, 4, 59); // local time
    const v = toLocalInput(d);
    expect(v).toBe('2030-01-02T03:04');
    expect(fromLocalInput(v)).toBe(new Date(2030, 0, 2, 3, 4, 0).toISOString());
  });
  it('refuses what is not a datetime-local value', () => {
    expect(fromLocalInput('')).toBeNull();
    expect(fromLocalInput('tomorrow')).toBeNull();
    expect(fromLocalInput('2030-13-40T99:99')).toBeNull();
  });
});
