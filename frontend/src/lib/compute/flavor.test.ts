import { describe, expect, it } from 'vitest';
import { exclusiveLabel } from './flavor';

describe('exclusiveLabel', () => {
  it('names what an exclusive flavor takes alone', () => {
    expect(exclusiveLabel('HOST')).toBe('whole machine, alone');
    expect(exclusiveLabel('NUMA_NODE')).toBe('one NUMA node, alone');
  });
  it('says nothing for a shared flavor', () => {
    expect(exclusiveLabel('NONE')).toBe('');
    expect(exclusiveLabel(undefined)).toBe('');
  });
});
