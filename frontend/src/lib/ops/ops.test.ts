import { describe, expect, it } from 'vitest';
import { capsByRegion, emptyCap, free, sumCaps, type Cap } from './capacity';
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
    expect(p).toEqual({ state: 'DRAINING', active: true, message: 'moving 3 VMs', secondsLeft: 600, unmovable: [] });
  });
  it('lists the VMs a drain cannot move', () => {
    const u = [{ vmID: '7', vmName: 'db', reason: '1 volume(s) attached' }];
    const p = drainProgress({ drainState: 'FAILED', drainMessage: 'drain failed: 1 VM(s) cannot move', drainUnmovable: u }, now);
    expect(p.unmovable).toEqual(u);
    expect(p.active).toBe(false);
  });
  it('treats an empty drain state as never drained', () => {
    expect(drainProgress({ drainState: '' }, now)).toEqual({ state: null, active: false, message: '', secondsLeft: null, unmovable: [] });
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

import { quotaLimits } from './quota';
describe('quota form', () => {
  const empty = { cpuPercent: '', vcpus: '', memoryGiB: '', storageGiB: '' };
  it('sends memory in the API unit (MB) when it is typed in GiB, as the bars show it', () => {
    expect(quotaLimits({ ...empty, memoryGiB: '64', storageGiB: '500' })).toEqual({ memoryMB: 65536, storageGB: 500 });
    expect(quotaLimits({ ...empty, memoryGiB: '1.5' })).toMatchObject({ memoryMB: 1536 });
  });
  it('keeps what is empty and refuses what is not a number of 0 or more', () => {
    expect(quotaLimits(empty)).toEqual({});
    expect(quotaLimits({ ...empty, vcpus: '-1' })).toBe('Limits are numbers, 0 or more.');
    expect(quotaLimits({ ...empty, memoryGiB: 'lots' })).toBe('Limits are numbers, 0 or more.');
  });
});
