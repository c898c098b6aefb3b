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

  it("preselects the server's default agent (config defaults.agent) over the alphabetically first (#30.11)", () => {
    expect(agentChoices(['alpha', 'uiagent'], undefined, 'uiagent').initial).toBe('uiagent');
    // the latest run's agent stays the first preference; a default that is not offered is ignored
    expect(agentChoices(['alpha', 'uiagent'], 'alpha', 'uiagent').initial).toBe('alpha');
    expect(agentChoices(['alpha', 'uiagent'], undefined, 'gone').initial).toBe('alpha');
    expect(agentChoices(undefined, undefined, 'codex').initial).toBe('codex');
  });
});
