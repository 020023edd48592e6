import { describe, expect, it } from 'vitest';
import { addEvent, isNewer, mergeEvents, unknownIds, withEvent } from './live';

const row = { id: '1', name: 'web', status: 'CREATING', updatedAt: '2026-01-01T00:00:01Z' };

describe('live merging', () => {
  it('lays a newer event over the row', () => {
    const ev = { id: '1', status: 'ACTIVE', updatedAt: '2026-01-01T00:00:02Z' };
    expect(withEvent(row, ev)).toEqual({ ...row, status: 'ACTIVE', updatedAt: ev.updatedAt });
  });
  it('ignores an older event (the query already saw something newer)', () => {
    const ev = { id: '1', status: 'INITIALIZING', updatedAt: '2026-01-01T00:00:00Z' };
    expect(withEvent(row, ev)).toBe(row);
  });
  it('ignores an event for another record', () => {
    expect(withEvent(row, { id: '2', status: 'ERROR', updatedAt: '2027-01-01T00:00:00Z' })).toBe(row);
  });
  it('keeps only the newest event per id', () => {
    let evs = addEvent(undefined, { id: '1', status: 'STARTING', updatedAt: '2026-01-01T00:00:05Z' });
    evs = addEvent(evs, { id: '1', status: 'ACTIVE', updatedAt: '2026-01-01T00:00:06Z' });
    evs = addEvent(evs, { id: '1', status: 'STARTING', updatedAt: '2026-01-01T00:00:04Z' });
    evs = addEvent(evs, { id: '2', status: 'STOPPED', updatedAt: '2026-01-01T00:00:01Z' });
    expect(evs['1'].status).toBe('ACTIVE');
    expect(Object.keys(evs)).toEqual(['1', '2']);
  });
  it('merges a list and finds events for records the list lacks', () => {
    const rows = [row, { ...row, id: '3' }];
    const evs = { '1': { id: '1', status: 'ACTIVE', updatedAt: '2026-01-01T00:00:02Z' }, '9': { id: '9', updatedAt: null } };
    expect(mergeEvents(rows, evs).map((r) => r.status)).toEqual(['ACTIVE', 'CREATING']);
    expect(unknownIds(rows, evs)).toEqual(['9']);
    expect(mergeEvents(rows, undefined)).toEqual(rows);
  });
  it('treats a missing time as oldest', () => {
    expect(isNewer({ id: '1' }, { id: '1', updatedAt: '2026-01-01T00:00:00Z' })).toBe(true);
    expect(isNewer({ id: '1', updatedAt: '2026-01-01T00:00:00Z' }, { id: '1' })).toBe(false);
  });
});
