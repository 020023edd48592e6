import { describe, expect, it } from 'vitest';
import { AGENT_USER_PREFIX, peopleWhere } from './PeoplePage';

describe('peopleWhere', () => {
  it('leaves node agents out unless asked', () => {
    expect(peopleWhere(false)).toEqual({ not: { usernameHasPrefix: AGENT_USER_PREFIX } });
    expect(peopleWhere(true)).toBeUndefined();
    expect(AGENT_USER_PREFIX).toBe('agent-node-'); // identity.AgentUsername
  });
});
