import { describe, expect, it } from 'vitest';
import { buildPolicy, emptyPolicy, formatLabels, parseLabels, parseList } from './policy';

describe('placement rules from the form', () => {
  it('parses label lists', () => {
    expect(parseLabels('tier=gold, ssd = yes\nzone=a')).toEqual({ tier: 'gold', ssd: 'yes', zone: 'a' });
    expect(parseLabels('  ')).toEqual({});
    expect(() => parseLabels('tier')).toThrow('"tier" is not key=value');
  });
  it('parses name lists', () => {
    expect(parseList('a, b  c,')).toEqual(['a', 'b', 'c']);
  });
  it('sends nothing for an empty form', () => {
    expect(buildPolicy(emptyPolicy)).toBeUndefined();
  });
  it('builds only the rules that are set', () => {
    expect(
      buildPolicy({
        ...emptyPolicy,
        clusterNames: ['c1'],
        hardAffinities: 'tier=gold',
        zones: [{ kind: 'RACK', mode: 'ANTI_AFFINITY', zone: '' }, { kind: 'POWER', mode: 'AFFINITY', zone: 'pz-1' }],
      }),
    ).toEqual({
      clusterNames: ['c1'],
      nodeLabelHardAffinities: { tier: 'gold' },
      zones: [{ kind: 'RACK', mode: 'ANTI_AFFINITY' }, { kind: 'POWER', mode: 'AFFINITY', zone: 'pz-1' }],
    });
  });
  it('formats labels back', () => {
    expect(formatLabels({ a: '1', b: '2' })).toBe('a=1, b=2');
    expect(formatLabels(null)).toBe('');
  });
});

import { describePolicy } from './policy';
describe('describePolicy', () => {
  it('lists the rules a stored policy sets and nothing for an empty one', () => {
    expect(describePolicy(null)).toEqual([]);
    expect(describePolicy({ clusterNames: null, nodeNames: [], zones: null })).toEqual([]);
    expect(
      describePolicy({ clusterNames: ['c1'], nodeLabelSoftAffinities: { ssd: 'yes' }, zones: [{ kind: 'RACK', mode: 'ANTI_AFFINITY', zone: null }] }),
    ).toEqual(['Clusters: c1', 'Preferred node labels: ssd=yes', 'Zones: rack anti-affinity']);
  });
});

describe('label spread and exclusions', () => {
  it('sends anti-affinity as topology keys and exclusions as label pairs', () => {
    const p = buildPolicy({ ...emptyPolicy, hardAntiAffinities: 'topology/rack, power', softAntiAffinities: 'az', hardExclusions: 'gen=old', softExclusions: 'noisy=yes' });
    expect(p).toEqual({
      nodeLabelHardAntiAffinities: { 'topology/rack': '', power: '' },
      nodeLabelSoftAntiAffinities: { az: '' },
      nodeLabelHardExclusions: { gen: 'old' },
      nodeLabelSoftExclusions: { noisy: 'yes' },
    });
    expect(describePolicy(p)).toEqual([
      'Spread over (one per value): topology/rack, power',
      'Spread over (evenly): az',
      'Forbidden node labels: gen=old',
      'Avoided node labels: noisy=yes',
    ]);
  });
});
