import { didYouMean } from '@app/storage';
import { AgentError } from './agents.errors';
import { AGENT_TYPES, AgentConfigLike, AgentSpec, CliAgentSpec, isAgentType, normalizeAgentType, RestAgentConfig, RestRunContext, tokenEnvVarFor } from './agent.types';
import { detectCliVersion, findExecutable, runShortCommand } from './binaries';
import { runPerplexity } from './rest/perplexity';
import { RestBackendOptions } from './rest/rest-options';
import { runXai } from './rest/xai';

/** Exact upstream invocations (runner-agents.md §4.1–§4.3); the prompt always comes on stdin. */
export const CLI_AGENT_ARGS: Readonly<Record<'claude' | 'codex' | 'gemini', readonly string[]>> = {
  claude: ['-p', '--input-format', 'text', '--output-format', 'stream-json', '--verbose', '--tools', 'default', '--permission-mode', 'bypassPermissions'],
  codex: ['exec', '--dangerously-bypass-approvals-and-sandbox', '--json', '-'],
  gemini: ['--screen-reader', 'true', '--approval-mode', 'yolo', '--output-format', 'stream-json'],
};

export interface ResolveOptions {
  /** Environment the agent will be spawned with; its PATH locates the binary (default process.env). */
  env?: Record<string, string | undefined>;
  /** Config name of the agent (defaults to `config.name`, then the type). */
  name?: string;
  /** Base directory for a relative `command` path. */
  cwd?: string;
}

/** The `agents:` map and default of a loaded config (structurally compatible with AppConfig). */
export interface AgentsConfigLike {
  agents: Record<string, AgentConfigLike>;
  defaults?: { agent?: string };
}

export interface SelectedAgent {
  name: string;
  type: string;
  config: AgentConfigLike;
}

/**
 * Agent selection (runner-agents.md §2.1 step 7): exact config name, then the first agent (by
 * name) whose type equals the value, then `defaults.agent`, then the alphabetically first agent.
 * Without a config the value itself is the type.
 */
export function selectAgentConfig(config: AgentsConfigLike | undefined, preferred?: string, depth = 0): SelectedAgent {
  const wanted = preferred?.trim() ?? '';
  if (!config) {
    if (!wanted) throw new AgentError('INVALID_CONFIG', 'no config found: create config.yaml (see README) or pass --config, or name an agent type with --agent');
    const type = normalizeAgentType(wanted);
    if (!isAgentType(type)) {
      const types = AGENT_TYPES.filter((t) => t !== 'command');
      throw new AgentError('UNKNOWN_AGENT', `unknown agent type "${wanted}"${didYouMean(wanted, types)}: without a config the agent must be a type: ${types.join(', ')}`);
    }
    return { name: wanted, type, config: { name: wanted, type } };
  }
  const names = Object.keys(config.agents ?? {}).sort();
  const pick = (name: string): SelectedAgent => {
    const cfg = config.agents[name];
    const type = normalizeAgentType(cfg.type || name);
    if (!type) throw new AgentError('INVALID_CONFIG', 'agent type is empty');
    return { name, type, config: { ...cfg, name, type } };
  };
  if (wanted) {
    if (Object.prototype.hasOwnProperty.call(config.agents, wanted)) return pick(wanted);
    const byType = names.find((n) => normalizeAgentType(config.agents[n].type || n) === wanted.toLowerCase());
    if (byType) return pick(byType);
    throw new AgentError('UNKNOWN_AGENT', `unknown agent "${wanted}"${didYouMean(wanted, names)}`);
  }
  const fallback = config.defaults?.agent?.trim();
  if (fallback && depth < 8) return selectAgentConfig(config, fallback, depth + 1);
  if (names.length === 0) throw new AgentError('INVALID_CONFIG', 'no agents configured');
  return pick(names[0]);
}

const GEMINI_INSTALL_HINT = 'install from https://github.com/google-gemini/gemini-cli';
// Keyed by the resolved binary: each gemini install is probed once per process.
const geminiProbes = new Map<string, Promise<void>>();

/**
 * Checks once per process (per binary) that `gemini --help` mentions `output-format`, i.e. that
 * the installed CLI can produce stream-json.
 */
export function checkGeminiStreamJson(geminiPath: string, env?: Record<string, string | undefined>, timeoutMs = 10_000): Promise<void> {
  let probe = geminiProbes.get(geminiPath);
  if (!probe) {
    probe = runShortCommand(geminiPath, ['--help'], { env, timeoutMs }).then(
      ({ stdout, stderr }) => {
        if (!`${stdout}${stderr}`.toLowerCase().includes('output-format')) {
          throw new AgentError(
            'UNSUPPORTED',
            'installed Gemini CLI does not support --output-format stream-json; please update to the latest version (npm install -g @google/gemini-cli or brew upgrade gemini-cli)',
          );
        }
      },
      (err: Error) => {
        throw new AgentError('BINARY_NOT_FOUND', `gemini CLI not found or failed to run (${GEMINI_INSTALL_HINT}): ${err.message}`, { cause: err });
      },
    );
    geminiProbes.set(geminiPath, probe);
  }
  return probe;
}

/**
 * Turns a configured agent into an {@link AgentSpec}: how to spawn a CLI agent, or the in-process
 * call of a REST agent. Every problem a restart cannot fix is an AgentError with a fatal code.
 * A plain class (no NestJS import, for the CLI's hot path): AgentsModule provides it through createAgentRegistry.
 */
export class AgentRegistry {
  versionTimeoutMs = 10_000;
  /** Retry/timeout knobs handed to the REST backends. */
  restOptions: RestBackendOptions = {};

  async resolve(agent: AgentConfigLike, opts: ResolveOptions = {}): Promise<AgentSpec> {
    const type = normalizeAgentType(agent.type ?? '');
    const name = opts.name ?? agent.name ?? type;
    const env = opts.env ?? process.env;
    if (!type) throw new AgentError('INVALID_CONFIG', 'agent type is empty');
    switch (type) {
      case 'claude':
      case 'codex':
      case 'gemini': {
        const resolvedPath = type === 'gemini' ? this.findGemini(env, opts.cwd) : findExecutable(type, env, opts.cwd);
        if (type === 'gemini') await checkGeminiStreamJson(resolvedPath, env, this.versionTimeoutMs);
        return { kind: 'cli', name, type, command: type, resolvedPath, args: [...CLI_AGENT_ARGS[type]], tokenEnvVar: tokenEnvVarFor(type) };
      }
      case 'command': {
        const command = agent.command?.trim();
        if (!command) throw new AgentError('INVALID_CONFIG', `agent "${name}" of type command has no command`);
        const resolvedPath = findExecutable(command, env, opts.cwd);
        return { kind: 'cli', name, type, command, resolvedPath, args: [...(agent.args ?? [])] };
      }
      case 'perplexity':
      case 'xai': {
        const bound: RestAgentConfig = { base_url: agent.base_url, model: agent.model, token: agent.token };
        const backend = type === 'perplexity' ? runPerplexity : runXai;
        return {
          kind: 'rest',
          name,
          type,
          tokenEnvVar: tokenEnvVarFor(type)!,
          config: bound,
          run: (ctx: RestRunContext) => backend(ctx, { ...bound, ...definedOnly(ctx.config) }, this.restOptions),
        };
      }
      default:
        throw new AgentError('UNSUPPORTED', `unsupported agent type "${type}"`);
    }
  }

  /** `agent_version` of a run: `<cli> --version` for claude/codex/gemini, '' otherwise. */
  detectVersion(spec: AgentSpec, env?: Record<string, string | undefined>): Promise<string> {
    if (spec.kind !== 'cli' || spec.type === 'command') return Promise.resolve('');
    return detectCliVersion(spec.resolvedPath, { env, timeoutMs: this.versionTimeoutMs });
  }

  /** The exact command line recorded in run-info: `<cmd> <args> < <prompt.md>`. */
  commandLine(spec: CliAgentSpec, promptPath: string): string {
    return `${[spec.command, ...spec.args].join(' ')} < ${promptPath}`;
  }

  private findGemini(env: Record<string, string | undefined>, cwd?: string): string {
    try {
      return findExecutable('gemini', env, cwd);
    } catch (err) {
      const reason = err instanceof AgentError ? err.message : String(err);
      throw new AgentError(err instanceof AgentError ? err.code : 'BINARY_NOT_FOUND', `gemini CLI not found or failed to run (${GEMINI_INSTALL_HINT}): ${reason}`, {
        cause: err,
      });
    }
  }
}

function definedOnly(config: RestAgentConfig | undefined): RestAgentConfig {
  const out: RestAgentConfig = {};
  for (const [k, v] of Object.entries(config ?? {})) if (v !== undefined) out[k as keyof RestAgentConfig] = v;
  return out;
}
