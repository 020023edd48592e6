import { describe, expect, it } from 'vitest';
import { diff, flatten } from './diff';

describe('flatten', () => {
  it('turns nested objects into dotted paths', () => {
    expect([...flatten({ a: 1, b: { c: 'x', d: [1, 2] }, e: null, f: [] })]).toEqual([
      ['a', '1'],
      ['b.c', 'x'],
      ['b.d.0', '1'],
      ['b.d.1', '2'],
      ['e', 'null'],
      ['f', '[]'],
    ]);
  });
});

describe('diff', () => {
  it('lists added, removed and changed fields, not unchanged ones or updated_at', () => {
    const rows = diff({ name: 'r1', height: 42, updated_at: 'x', old: 1 }, { name: 'r2', height: 42, updated_at: 'y', added: true });
    expect(rows).toEqual([
      { path: 'added', before: undefined, after: 'true', kind: 'added' },
      { path: 'name', before: 'r1', after: 'r2', kind: 'changed' },
      { path: 'old', before: '1', after: undefined, kind: 'removed' },
    ]);
  });
  it('treats a create (no before) as all added and a delete (no after) as all removed', () => {
    expect(diff(null, { name: 'h' }).map((r) => r.kind)).toEqual(['added']);
    expect(diff({ name: 'h' }, null).map((r) => r.kind)).toEqual(['removed']);
  });
  it('keeps unchanged fields when asked', () => {
    expect(diff({ a: 1 }, { a: 1 }, true)).toEqual([{ path: 'a', before: '1', after: '1', kind: 'same' }]);
  });
});
