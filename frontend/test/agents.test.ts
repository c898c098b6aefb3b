import { describe, expect, it } from 'vitest';
import { agentChoices, KNOWN_AGENT_TYPES } from '../src/data/agents';

describe('new-task dialog agent choices (issue #12)', () => {
  it('offers the configured agent names, preferring the latest run agent when configured', () => {
    expect(agentChoices(['fast', 'smart'], 'smart')).toEqual({ options: ['fast', 'smart'], initial: 'smart', configured: true });
    expect(agentChoices(['fast', 'smart'], 'command')).toEqual({ options: ['fast', 'smart'], initial: 'fast', configured: true });
  });

  it('falls back to the known agent types when the server has no configured agents', () => {
    expect(agentChoices([], undefined)).toEqual({ options: KNOWN_AGENT_TYPES, initial: 'claude', configured: false });
    expect(agentChoices(undefined, 'codex').initial).toBe('codex');
  });
});
