import { describe, expect, it } from 'vitest';
import { groupHops, pathCount } from './trace';
import type { PathHop } from './types';

const hop = (level: number, from: string, to: string, role: string, link = `${from}-${to}`): PathHop => ({
  level, linkID: link, fromHostID: from, fromHostName: from.toUpperCase(), fromPort: 'up', toHostID: to, toHostName: to.toUpperCase(), toPort: 'down', toRole: role,
});

const hops = [
  hop(2, 'leaf', 'spine1', 'RACK_SPINE'),
  hop(1, 'srv', 'leaf', 'RACK_LEAF'),
  hop(2, 'leaf', 'spine2', 'RACK_SPINE'),
  hop(3, 'spine1', 'gw', 'GATEWAY_ROUTER'),
  hop(3, 'spine2', 'gw', 'GATEWAY_ROUTER'),
];

describe('groupHops', () => {
  it('orders levels and groups hops by the device they leave', () => {
    const lv = groupHops(hops);
    expect(lv.map((l) => l.level)).toEqual([1, 2, 3]);
    expect(lv[1].groups).toHaveLength(1);
    expect(lv[1].groups[0].hops.map((h) => h.toHostID)).toEqual(['spine1', 'spine2']);
    expect(lv[2].groups.map((g) => g.fromHostID)).toEqual(['spine1', 'spine2']);
    expect(lv[2].reached).toEqual([{ id: 'gw', name: 'GW', role: 'GATEWAY_ROUTER' }]);
    expect(lv[2].roles).toEqual(['GATEWAY_ROUTER']);
  });
  it('is empty without hops', () => {
    expect(groupHops([])).toEqual([]);
    expect(pathCount([])).toBe(0);
  });
});

describe('pathCount', () => {
  it('counts the distinct upward paths', () => {
    expect(pathCount(hops)).toBe(2);
    expect(pathCount([hop(1, 'srv', 'leaf', 'RACK_LEAF')])).toBe(1);
  });
});
