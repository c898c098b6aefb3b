import type { UsageTotals } from '@app/contracts';

export type AgentType = 'claude' | 'codex' | 'gemini' | 'perplexity' | 'xai' | 'command';

export const AGENT_TYPES: readonly AgentType[] = ['claude', 'codex', 'gemini', 'perplexity', 'xai', 'command'];

/** The agent-related subset of the storage config's AgentConfig (structurally compatible with it). */
export interface AgentConfigLike {
  name?: string;
  type: string;
  token?: string;
  base_url?: string;
  model?: string;
  /** `command` agents (D17): the executable to run. */
  command?: string;
  /** `command` agents (D17): arguments passed before the prompt arrives on stdin. */
  args?: string[];
  /** Add our MCP server (`run-agent mcp`) to the agent CLI's configuration for each run. */
  mcp?: boolean;
}

/** Settings a REST backend reads from the agent's config entry. */
export interface RestAgentConfig {
  base_url?: string;
  model?: string;
  token?: string;
}

/** What a REST backend reports besides the text it wrote: the provider's token usage (and cost when given). */
export interface RestRunResult {
  usage?: UsageTotals;
}

export interface RestRunContext {
  /** Full prompt.md text, sent as the single user message. */
  prompt: string;
  /** The run environment (runner-agents.md §2.4); tokens and endpoint overrides are looked up here first. */
  env: Record<string, string>;
  stdoutPath: string;
  stderrPath: string;
  signal?: AbortSignal;
  /** Overrides of the config bound to the spec. */
  config?: RestAgentConfig;
  /** Optional live copy of what is written to the stdout file (the CLI may echo it to the console). */
  echo?: (text: string) => void;
}

/** How to run a CLI agent: the runner spawns `command args…` with the prompt on stdin. */
export interface CliAgentSpec {
  kind: 'cli';
  name: string;
  type: 'claude' | 'codex' | 'gemini' | 'command';
  /** The command as configured (e.g. `claude`); used for run-info `commandline`. */
  command: string;
  /** Absolute path the command resolved to when the spec was built. */
  resolvedPath: string;
  args: string[];
  /** Env var that carries the config token (undefined for `command` agents). */
  tokenEnvVar?: string;
}

/** How to run a REST agent: in-process, writing the answer to the stdout file. */
export interface RestAgentSpec {
  kind: 'rest';
  name: string;
  type: 'perplexity' | 'xai';
  tokenEnvVar: string;
  config: RestAgentConfig;
  run(ctx: RestRunContext): Promise<RestRunResult>;
}

export type AgentSpec = CliAgentSpec | RestAgentSpec;

const TOKEN_ENV_VARS: Readonly<Record<string, string>> = {
  claude: 'ANTHROPIC_API_KEY',
  codex: 'OPENAI_API_KEY',
  gemini: 'GEMINI_API_KEY',
  perplexity: 'PERPLEXITY_API_KEY',
  xai: 'XAI_API_KEY',
};

/** Per-type token variable (runner-agents.md §4.6); undefined for types without one. */
export function tokenEnvVarFor(type: string): string | undefined {
  return TOKEN_ENV_VARS[type.trim().toLowerCase()];
}

export function normalizeAgentType(type: string): string {
  return type.trim().toLowerCase();
}

export function isAgentType(type: string): type is AgentType {
  return (AGENT_TYPES as readonly string[]).includes(type);
}

export function isRestAgentType(type: string): type is 'perplexity' | 'xai' {
  const t = normalizeAgentType(type);
  return t === 'perplexity' || t === 'xai';
}
