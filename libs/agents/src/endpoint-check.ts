import type { AgentConfig } from '@app/storage';
import type { AgentCheck } from './agent-check';
import { PERPLEXITY_DEFAULT_ENDPOINT } from './rest/perplexity';
import { xaiEndpoint } from './rest/xai';

/** `run-agent validate --check-network`: the endpoint a REST agent calls, and whether it answers HTTP at all (any status; 5 s); undefined for CLI agents. */
export async function checkAgentEndpoint(agent: AgentConfig): Promise<{ url: string; ok: boolean; error?: string } | undefined> {
  let url: string;
  if (agent.type === 'perplexity') url = agent.base_url?.trim() || PERPLEXITY_DEFAULT_ENDPOINT;
  else if (agent.type === 'xai') url = xaiEndpoint(agent.base_url ?? '');
  else return undefined;
  try {
    await fetch(url, { method: 'HEAD', signal: AbortSignal.timeout(5000) });
    return { url, ok: true };
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return { url, ok: false, error: cause?.code ?? cause?.message ?? (err as Error).message };
  }
}

/** One line of `run-agent validate`'s agent list. */
export function formatAgentCheck(r: AgentCheck): string {
  const symbol = r.ok ? '✓' : '✗';
  const name = r.name.padEnd(12);
  const version = r.version ? ` ${r.version.padEnd(10)}` : '';
  const detail = r.tokenStatus ? `${r.cliStatus}, token: ${r.tokenStatus}` : r.cliStatus;
  return `  ${symbol} ${name}${version} (${detail})\n`;
}
