// The runner's single point of contact with the agent layer: selection, spec resolution,
// version detection (cached per binary) and the diversification policy (D3).
import { mkdirSync, statSync } from 'node:fs';
import type { AppConfig } from '@app/storage';
import { AgentError, AgentRegistry, createAgentRegistry, AgentSpec, DiversificationPolicy, SelectedAgent, isAgentType, selectAgentConfig } from '@app/agents';

/**
 * Config selection (§2.1 step 7). A name that is a known agent type but not configured still runs
 * that type (agents call `run-agent job --agent claude` whatever the config names its agents).
 */
export function selectAgent(config: AppConfig | undefined, name?: string): SelectedAgent {
  try {
    return selectAgentConfig(config, name);
  } catch (err) {
    const type = name?.trim().toLowerCase() ?? '';
    if (config && err instanceof AgentError && err.code === 'UNKNOWN_AGENT' && isAgentType(type) && type !== 'command') {
      return selectAgentConfig(undefined, type);
    }
    throw err;
  }
}

export function resolveSpec(agent: SelectedAgent, env: Record<string, string | undefined>, cwd: string, registry: AgentRegistry = createAgentRegistry()): Promise<AgentSpec> {
  return registry.resolve(agent.config, { env, name: agent.name, cwd });
}

const versions = new Map<string, Promise<string>>();

/** `<cli> --version` once per binary (path + mtime) and process: restarts must stay cheap. */
export function detectVersion(spec: AgentSpec, env: Record<string, string | undefined>, registry: AgentRegistry = createAgentRegistry()): Promise<string> {
  if (spec.kind !== 'cli') return Promise.resolve('');
  let stamp = '';
  try {
    stamp = String(statSync(spec.resolvedPath).mtimeMs);
  } catch {
    // the spawn will report the missing binary
  }
  const key = `${spec.resolvedPath}\0${stamp}`;
  let version = versions.get(key);
  if (!version) {
    version = registry.detectVersion(spec, env);
    versions.set(key, version);
  }
  return version;
}

export interface AgentChoice {
  agent: string;
  policy: DiversificationPolicy;
}

/** D3: the agent the diversification policy picks for this task's next run (undefined when off). */
export async function chooseAgent(config: AppConfig | undefined, taskDir: string): Promise<AgentChoice | undefined> {
  if (!config) return undefined;
  const policy = DiversificationPolicy.fromConfig(config);
  if (!policy) return undefined;
  mkdirSync(taskDir, { recursive: true });
  return { agent: await policy.next(taskDir), policy };
}
