import { describe, expect, it } from 'vitest';
import { orderExplainedNodes, shortReason, summarizePlacement, summarizeRejections, type ExplainedNode } from './placement';

const n = (name: string, rejectedBy?: string, reason?: string, total = 0): ExplainedNode => ({
  node: { id: name, name },
  rejectedBy: rejectedBy ?? null,
  reason: reason ?? null,
  code: rejectedBy ? rejectedBy.toUpperCase() : null,
  total,
});

describe('summarizePlacement', () => {
  it('counts fitting nodes and groups rejections, most common first', () => {
    const nodes = [
      ...Array.from({ length: 20 }, (_, i) => n(`m${i}`, 'MemoryFit', 'node lacks memory')),
      ...Array.from({ length: 4 }, (_, i) => n(`c${i}`, 'Schedulable', 'node is cordoned')),
    ];
    const s = summarizePlacement(nodes);
    expect(s.fit).toBe(0);
    expect(s.total).toBe(24);
    expect(s.reasons).toEqual([
      { filter: 'MemoryFit', reason: 'node lacks memory', count: 20 },
      { filter: 'Schedulable', reason: 'node is cordoned', count: 4 },
    ]);
    expect(s.text).toBe('0 of 24 nodes fit: 20 lack memory, 4 cordoned');
  });
  it('says only how many fit when nothing was rejected', () => {
    expect(summarizePlacement([n('a', undefined, undefined, 3), n('b')]).text).toBe('2 of 2 nodes fit');
  });
  it('falls back to the code or filter when the reason is empty', () => {
    const s = summarizePlacement([{ node: { id: '1', name: 'a' }, rejectedBy: 'CPUFit', code: 'NO_CPU', total: 0 }]);
    expect(s.reasons[0].reason).toBe('NO_CPU');
    expect(s.text).toBe('0 of 1 node fit: 1 NO_CPU');
  });
  it('handles an empty cluster', () => {
    expect(summarizePlacement([]).text).toBe('0 of 0 nodes fit');
  });
});

describe('shortReason', () => {
  it('drops the leading "node"', () => {
    expect(shortReason('node is not one of the policy\'s node names')).toBe("not one of the policy's node names");
    expect(shortReason('node lacks a required label')).toBe('lack a required label');
    expect(shortReason('too few vCPUs')).toBe('too few vCPUs');
  });
});

describe('orderExplainedNodes', () => {
  it('puts fitting nodes first by score, then rejected ones by filter and name', () => {
    const out = orderExplainedNodes([n('z', 'B'), n('low', undefined, undefined, 1), n('a', 'B'), n('x', 'A'), n('high', undefined, undefined, 9)]);
    expect(out.map((x) => x.node.name)).toEqual(['high', 'low', 'x', 'a', 'z']);
  });
});

describe('summarizeRejections', () => {
  it('counts the nodes turned away, most common reason first, clusters apart', () => {
    const s = summarizeRejections([
      { filter: 'Schedulable', code: 'UNSCHEDULABLE', count: 1 },
      { filter: 'ZonePolicy', code: 'ZONE_ANTI_AFFINITY', count: 7 },
      { filter: 'Cluster', code: 'CLUSTER_EXCLUDED', count: 2 },
      { filter: 'Capacity', code: 'NO_MEMORY', count: 0 },
    ]);
    expect(s.text).toBe('8 nodes turned away: 7 ZONE_ANTI_AFFINITY (ZonePolicy), 1 UNSCHEDULABLE (Schedulable); 2 clusters excluded by the policy');
    expect(s.reasons.map((r) => r.count)).toEqual([7, 2, 1]);
  });
  it('says so when nothing was turned away', () => {
    expect(summarizeRejections([]).text).toBe('no node was turned away');
    expect(summarizeRejections([{ filter: 'Schedulable', code: 'UNSCHEDULABLE', count: 1 }]).text).toBe('1 node turned away: 1 UNSCHEDULABLE (Schedulable)');
  });
});
