import { describe, expect, it } from 'vitest';
import { statusTimeline } from './timeline';

describe('statusTimeline', () => {
  it('keeps the rows that change the status, oldest first, with the reason after', () => {
    const rows = [
      { id: '3', createdAt: '2026-11-26T10:02:00Z', actor: 'node:n1', action: 'reportAssignmentStatus',
        before: { status: 'CREATING' }, after: { status: 'ACTIVE', status_reason: 'running' } },
      { id: '2', createdAt: '2026-11-26T10:01:00Z', actor: 'alice', action: 'updateVirtualMachine',
        before: { status: 'CREATING', description: 'a' }, after: { status: 'CREATING', description: 'b' } },
      { id: '1', createdAt: '2026-11-26T10:00:00Z', actor: 'alice', action: 'createVirtualMachine',
        after: { status: 'INITIALIZING', status_reason: 'placed' } },
      { id: '4', createdAt: '2026-11-26T10:03:00Z', actor: 'bob', action: 'deleteVirtualMachine', before: { status: 'ACTIVE' } },
    ];
    expect(statusTimeline(rows).map((t) => [t.id, t.from, t.to, t.actor, t.reason])).toEqual([
      ['1', undefined, 'INITIALIZING', 'alice', 'placed'],
      ['3', 'CREATING', 'ACTIVE', 'node:n1', 'running'],
      ['4', 'ACTIVE', 'DELETED', 'bob', undefined],
    ]);
  });
});
