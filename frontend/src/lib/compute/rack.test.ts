import { describe, expect, it } from 'vitest';
import { applyNodeEvent, applyVMEvent, countByStatus, groupByRack, share, shortNodeName, type RackNode, type VMEvent } from './rack';

const node = (id: string, name: string, rackName: string | null, vms: RackNode['vms'] = []): RackNode => ({
  node: { id, name, status: 'READY', cordoned: false, cpuCapacity: 16, cpuAllocated: 0, memoryCapacityMB: 1024, memoryAllocatedMB: 0, vmCount: vms.length },
  hostID: 'h' + id,
  hostName: name,
  rackID: rackName ? 'r-' + rackName : null,
  rackName,
  vms,
});
const vm = (id: string, status = 'ACTIVE') => ({ id, name: 'vm' + id, status, tenantID: 't', tenantName: 'acme', flavorName: 's1', vcpus: 1, memoryMB: 512 });
const ev = (id: string, nodeID: string | null, status = 'ACTIVE', clusterID = 'c1'): VMEvent => ({
  id,
  name: 'vm' + id,
  status,
  tenant: { id: 't', name: 'acme' },
  flavor: { name: 's1', vcpus: 1, memoryMB: 512 },
  node: nodeID ? { id: nodeID } : null,
  cluster: { id: clusterID },
});

describe('groupByRack', () => {
  it('groups nodes by rack in natural order, rackless last', () => {
    const g = groupByRack([node('1', 'n10', 'rack-10'), node('2', 'n2', 'rack-2'), node('3', 'n1', null), node('4', 'n1', 'rack-2')]);
    expect(g.map((x) => x.rack)).toEqual(['rack-2', 'rack-10', 'No rack']);
    expect(g[0].nodes.map((n) => n.node.name)).toEqual(['n1', 'n2']);
  });
});

describe('applyVMEvent', () => {
  const nodes = [node('1', 'a', 'r', [vm('v1', 'CREATING')]), node('2', 'b', 'r')];
  it('updates a VM in place', () => {
    const out = applyVMEvent(nodes, ev('v1', '1'), 'c1');
    expect(out[0].vms[0].status).toBe('ACTIVE');
    expect(out[1]).toBe(nodes[1]);
  });
  it('adds a new VM to its node', () => {
    const out = applyVMEvent(nodes, ev('v2', '2', 'INITIALIZING'), 'c1');
    expect(out[1].vms.map((v) => v.id)).toEqual(['v2']);
    expect(out[1].node.vmCount).toBe(1);
  });
  it('moves a VM that changed node', () => {
    const out = applyVMEvent(nodes, ev('v1', '2'), 'c1');
    expect(out[0].vms).toEqual([]);
    expect(out[1].vms[0].id).toBe('v1');
  });
  it('removes a deleted VM or one placed in another cluster', () => {
    expect(applyVMEvent(nodes, ev('v1', '1', 'DELETED'), 'c1')[0].vms).toEqual([]);
    expect(applyVMEvent(nodes, ev('v1', '1', 'ACTIVE', 'c2'), 'c1')[0].vms).toEqual([]);
  });
});

describe('applyNodeEvent and countByStatus', () => {
  it('changes status, cordon and allocation', () => {
    const nodes = [node('1', 'a', 'r', [vm('v1'), vm('v2', 'ERROR')])];
    const out = applyNodeEvent(nodes, { id: '1', status: 'NOT_READY', schedulable: false, cpuCapacity: 16, cpuAllocated: 4, memoryCapacityMB: 1024, memoryAllocatedMB: 512 });
    expect(out[0].node).toMatchObject({ status: 'NOT_READY', cordoned: true, cpuAllocated: 4 });
    expect(countByStatus(out)).toEqual({ ACTIVE: 1, ERROR: 1 });
  });
});

describe('shortNodeName and share', () => {
  it('drops the rack prefix when there is one', () => {
    expect(shortNodeName('tky1-dc1-floor-1-1-1-rack-1-1-server01', 'rack-1-1')).toBe('server01');
    expect(shortNodeName('node-7', 'rack-2')).toBe('node-7');
    expect(shortNodeName('rack-2-', 'rack-2')).toBe('rack-2-');
    expect(shortNodeName('n1', null)).toBe('n1');
  });
  it('computes a bounded percentage', () => {
    expect(share(1, 4)).toBe(25);
    expect(share(5, 4)).toBe(100);
    expect(share(1, 0)).toBe(0);
  });
});
