import { describe, expect, it } from 'vitest';
import { commonPrefix, edgeLabel, portsOf, rankOf, toElements, wrapName } from './elements';
import type { Diagram } from './types';

const port = (id: string, name: string, extra: object = {}) => ({ id, name, addresses: [], ...extra });

const diagram: Diagram = {
  truncated: false,
  nodes: [
    { id: 'h1', kind: 'HOST', name: 'tky1-dc1-rack-1-server01', status: 'ACTIVE' },
    { id: 'l1', kind: 'ROUTER', name: 'tky1-dc1-rack-1-leaf01', role: 'RACK_LEAF' },
    { id: 'g1', kind: 'ROUTER', name: 'tky1-dc1-gateway01', role: 'GATEWAY_ROUTER' },
    { id: 'n1', kind: 'NETWORK', name: 'tky1-dc1-mgmt', cidr: '10.1.0.0/20', vlan: 10 },
  ],
  edges: [
    { id: 'k1', kind: 'LINK', source: 'h1', target: 'l1', label: '', sourcePort: port('p1', 'eth0', { mac: 'aa', addresses: ['10.1.1.1'] }), targetPort: port('p2', 'swp3') },
    { id: 'k2', kind: 'LINK', source: 'h1', target: 'l1', label: '', sourcePort: port('p3', 'eth1'), targetPort: port('p4', 'swp4') },
    { id: 'k3', kind: 'LINK', source: 'l1', target: 'g1', label: '', sourcePort: port('p5', 'swp1'), targetPort: port('p6', 'swp9') },
    { id: 'p1', kind: 'ATTACHMENT', source: 'h1', target: 'n1', label: '', sourcePort: port('p1', 'eth0', { mac: 'aa', addresses: ['10.1.1.1'] }) },
    { id: 'k9', kind: 'LINK', source: 'h1', target: 'missing', label: '' },
  ],
};

describe('toElements', () => {
  const els = toElements(diagram, 'h1');
  it('keeps every node with classes by kind and role, and marks the start', () => {
    expect(els.nodes.map((n) => n.data.id)).toEqual(['h1', 'l1', 'g1', 'n1']);
    expect(els.nodes[0].classes).toBe('kind-host start');
    expect(els.nodes[1].classes).toBe('kind-router role-rack-leaf');
    expect(els.nodes[3].classes).toBe('kind-network');
  });
  it('labels nodes without the shared prefix, networks with CIDR and VLAN', () => {
    expect(els.nodes[0].data.label).toBe('rack-1-server01');
    expect(els.nodes[3].data.label).toBe('mgmt\n10.1.0.0/20 · VLAN 10');
  });
  it('drops edges whose ends are missing and counts them', () => {
    expect(els.edges.map((e) => e.data.id)).toEqual(['k1', 'k2', 'k3', 'p1']);
    expect(els.dropped).toBe(1);
  });
  it('numbers parallel edges and orients edges from the upper tier down', () => {
    const [k1, k2, k3] = els.edges;
    expect([k1.data.parallelIndex, k1.data.parallelCount, k2.data.parallelIndex]).toEqual([0, 2, 1]);
    expect(k1.classes).toBe('link parallel');
    expect(k3.classes).toBe('link');
    expect([k1.data.source, k1.data.target]).toEqual(['l1', 'h1']);
    expect([k3.data.source, k3.data.target]).toEqual(['g1', 'l1']);
    expect(k1.data.label).toBe('eth0 – swp3');
    expect(els.edges[3].data.label).toBe('eth0');
  });
  it('drops a repeated edge id', () => {
    const d = { ...diagram, edges: [diagram.edges[0], diagram.edges[0]] };
    const e = toElements(d);
    expect(e.edges).toHaveLength(1);
    expect(e.dropped).toBe(1);
  });
});

describe('helpers', () => {
  it('ranks gateways above leaves above servers above networks', () => {
    expect(rankOf({ kind: 'ROUTER', role: 'GATEWAY_ROUTER' })).toBeLessThan(rankOf({ kind: 'SWITCH', role: 'RACK_LEAF' }));
    expect(rankOf({ kind: 'SWITCH' })).toBeLessThan(rankOf({ kind: 'HOST' }));
    expect(rankOf({ kind: 'HOST', role: '' })).toBeLessThan(rankOf({ kind: 'NETWORK' }));
  });
  it('finds the shared dash-ended prefix', () => {
    expect(commonPrefix(['tky1-dc1-a', 'tky1-dc1-b', 'tky1-dx'])).toBe('tky1-');
    expect(commonPrefix(['only'])).toBe('');
    expect(commonPrefix(['abc', 'abd'])).toBe('');
  });
  it('wraps long names after dashes', () => {
    expect(wrapName('floor-1-1-1-rack-1-1-server01', 18)).toBe('floor-1-1-1-rack-\n1-1-server01');
    expect(wrapName('short')).toBe('short');
  });
  it('labels a link by both ports, an attachment by its port', () => {
    expect(edgeLabel({ kind: 'LINK', sourcePort: port('a', 'eth0'), targetPort: null })).toBe('eth0 – ?');
  });
});

describe('portsOf', () => {
  it('lists a node’s ports once, with the cable’s far end and the network', () => {
    const ps = portsOf(diagram, 'h1');
    expect(ps.map((p) => p.name)).toEqual(['eth0', 'eth1']);
    expect(ps[0]).toMatchObject({ mac: 'aa', addresses: ['10.1.1.1'], peerName: 'tky1-dc1-rack-1-leaf01', peerPort: 'swp3', networkName: 'tky1-dc1-mgmt' });
    expect(portsOf(diagram, 'l1').map((p) => `${p.name}>${p.peerPort}`)).toEqual(['swp1>swp9', 'swp3>eth0', 'swp4>eth1']);
  });
});
