import { describe, expect, it } from 'vitest';
import { canForceDelete, drainNeedsForce, forceDeleteWarning, unknownExplanation, vmBusyStatuses, vmStatuses, vmStatusTitle } from './vmStatus';

describe('vmStatuses', () => {
  it('offers UNKNOWN and never DELETED (the filter adds it last)', () => {
    expect(vmStatuses).toContain('UNKNOWN');
    expect(vmStatuses).not.toContain('DELETED');
  });
  it('does not count UNKNOWN as in progress', () => {
    expect(vmBusyStatuses as readonly string[]).not.toContain('UNKNOWN');
  });
});

describe('vmStatusTitle', () => {
  it('explains UNKNOWN, keeping the reason', () => {
    expect(vmStatusTitle('UNKNOWN')).toBe(unknownExplanation);
    expect(vmStatusTitle('UNKNOWN', 'node n1 DOWN')).toBe(`${unknownExplanation} — node n1 DOWN`);
  });
  it('is the reason for other statuses', () => {
    expect(vmStatusTitle('ERROR', 'boot failed')).toBe('boot failed');
    expect(vmStatusTitle('ACTIVE', '')).toBeUndefined();
    expect(vmStatusTitle('ACTIVE', null)).toBeUndefined();
  });
});

describe('canForceDelete', () => {
  it('is for operators only', () => {
    expect(canForceDelete({ status: 'UNKNOWN' }, false)).toBe(false);
    expect(canForceDelete({ status: 'ACTIVE', nodeStatus: 'DOWN' }, false)).toBe(false);
  });
  it('offers it for UNKNOWN VMs and VMs on a node that is not READY', () => {
    expect(canForceDelete({ status: 'UNKNOWN' }, true)).toBe(true);
    expect(canForceDelete({ status: 'ACTIVE', nodeStatus: 'NOT_READY' }, true)).toBe(true);
    expect(canForceDelete({ status: 'DELETING', nodeStatus: 'DOWN' }, true)).toBe(true);
  });
  it('does not offer it on a READY node, unplaced, or once deleted', () => {
    expect(canForceDelete({ status: 'ACTIVE', nodeStatus: 'READY' }, true)).toBe(false);
    expect(canForceDelete({ status: 'ERROR', nodeStatus: null }, true)).toBe(false);
    expect(canForceDelete({ status: 'DELETED', nodeStatus: 'DOWN' }, true)).toBe(false);
  });
});

describe('drainNeedsForce', () => {
  it('needs force unless the node is READY', () => {
    expect(drainNeedsForce('READY')).toBe(false);
    expect(drainNeedsForce('NOT_READY')).toBe(true);
    expect(drainNeedsForce('DOWN')).toBe(true);
    expect(drainNeedsForce('UNKNOWN')).toBe(true);
    expect(drainNeedsForce(undefined)).toBe(false);
  });
});

describe('forceDeleteWarning', () => {
  it('says why and what happens', () => {
    const w = forceDeleteWarning({ name: 'web-1', status: 'UNKNOWN', node: { name: 'n1', status: 'DOWN' } });
    expect(w).toContain('Force delete web-1?');
    expect(w).toContain(unknownExplanation);
    expect(w).toContain('capacity and quota are freed now');
  });
  it('names the node that is not ready', () => {
    expect(forceDeleteWarning({ name: 'db', status: 'ACTIVE', node: { name: 'n2', status: 'NOT_READY' } })).toContain('node n2 is not ready');
  });
});
