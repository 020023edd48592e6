import { describe, expect, it } from 'vitest';
import { rackPlace } from './place';

describe('rackPlace', () => {
  it('names row and position when the rack has them', () => {
    expect(rackPlace('B', 3)).toBe('row B, position 3 · ');
  });
  it('leaves out what the rack lacks instead of "row , position 0"', () => {
    expect(rackPlace('', 0)).toBe('');
    expect(rackPlace(null, undefined)).toBe('');
    expect(rackPlace('  ', 4)).toBe('position 4 · ');
    expect(rackPlace('A', 0)).toBe('row A · ');
  });
});
