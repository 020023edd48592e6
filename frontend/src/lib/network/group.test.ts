import { describe, expect, it } from 'vitest';
import { groupDiagram, groupId } from './group';
import type { Diagram } from './types';

/** A server s0 on a leaf and on a management network with n other servers. */
function fanOut(n: number): Diagram {
  const d: Diagram = {
    truncated: false,
    nodes: [
      { id: 's0', kind: 'HOST', name: 's0' },
      { id: 'leaf', kind: 'SWITCH', name: 'leaf' },
      { id: 'mgmt', kind: 'NETWORK', name: 'mgmt' },
    ],
    edges: [
      { id: 'l0', kind: 'LINK', source: 's0', target: 'leaf', label: '' },
      { id: 'a0', kind: 'ATTACHMENT', source: 's0', target: 'mgmt', label: '' },
    ],
  };
  for (let i = 1; i <= n; i++) {
    d.nodes.push({ id: `s${i}`, kind: 'HOST', name: `s${i}` });
    d.edges.push({ id: `a${i}`, kind: 'ATTACHMENT', source: `s${i}`, target: 'mgmt', label: '' });
  }
  return d;
}

describe('groupDiagram', () => {
  it('replaces a network’s many single-attached members by one group node', () => {
    const { diagram, groups } = groupDiagram(fanOut(200), new Set(), 's0');
    expect(groups).toHaveLength(1);
    expect(groups[0]).toMatchObject({ id: groupId('mgmt'), hub: 'mgmt', label: '200 hosts' });
    expect(diagram.nodes.map((n) => n.id).sort()).toEqual(['group:mgmt', 'leaf', 'mgmt', 's0']);
    expect(diagram.edges.map((e) => [e.source, e.target])).toContainEqual(['group:mgmt', 'mgmt']);
    expect(diagram.edges).toHaveLength(3);
  });
  it('draws every member of an expanded network, and leaves small networks alone', () => {
    expect(groupDiagram(fanOut(200), new Set(['mgmt']), 's0').diagram.nodes).toHaveLength(203);
    expect(groupDiagram(fanOut(5), new Set(), 's0').groups).toEqual([]);
  });
});
