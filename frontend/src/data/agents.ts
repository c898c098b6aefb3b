/** Agent types the server knows; offered when the server reports no configured agents. */
export const KNOWN_AGENT_TYPES = ['claude', 'codex', 'gemini', 'perplexity', 'xai'];

/**
 * What the new-task dialog offers (issue #12): the server's configured agent names
 * (GET /api/v1/status `configured_agents`) when there are any, else the known types; the initial
 * choice is the preferred agent (e.g. the latest run's) when it is offered, else the server's
 * default agent (`default_agent`, config `defaults.agent`; #30.11), else the first.
 */
export function agentChoices(
  configured: readonly string[] | undefined,
  preferred?: string,
  serverDefault?: string,
): { options: string[]; initial: string; configured: boolean } {
  const names = (configured ?? []).filter((n) => n.trim() !== '');
  const options = names.length > 0 ? [...names] : [...KNOWN_AGENT_TYPES];
  const offered = (name: string | undefined): name is string => !!name && options.includes(name);
  const initial = offered(preferred) ? preferred : offered(serverDefault) ? serverDefault : options[0];
  return { options, initial, configured: names.length > 0 };
}
