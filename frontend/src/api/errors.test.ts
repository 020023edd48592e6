import { describe as group, expect, it } from 'vitest';
import { CombinedError } from 'urql';
import { describe, problems } from './errors';

group('problems', () => {
  it('names the code and field of each GraphQL error', () => {
    const err = new CombinedError({
      graphQLErrors: [{ message: 'must not be empty', extensions: { code: 'VALIDATION', field: 'name' } }],
    });
    expect(problems(err)).toEqual([{ message: 'must not be empty', code: 'VALIDATION', field: 'name' }]);
    expect(describe(err)).toBe('VALIDATION (name): must not be empty');
  });
  it('reports a network error as unreachable', () => {
    const err = new CombinedError({ networkError: new Error('Failed to fetch') });
    expect(problems(err)[0].code).toBe('NETWORK');
    expect(problems(err)[0].message).toContain('Failed to fetch');
  });
  it('lists a repeated problem once', () => {
    const forbidden = { message: 'you may not read ComputeNode', extensions: { code: 'FORBIDDEN' } };
    const err = new CombinedError({ graphQLErrors: [forbidden, forbidden, { message: 'other', extensions: { code: 'FORBIDDEN' } }] });
    expect(problems(err).map((p) => p.message)).toEqual(['you may not read ComputeNode', 'other']);
  });
  it('is empty without an error', () => {
    expect(problems(undefined)).toEqual([]);
  });
});
