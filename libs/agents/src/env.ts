import { delimiter } from 'node:path';
import { tokenEnvVarFor } from './agent.types';

/** Values the runner exports to every agent (runner-agents.md §2.4 step 1). */
export interface JrunValues {
  projectId: string;
  taskId: string;
  runId: string;
  parentRunId?: string;
  /** `<task>/runs`, not the runs root. */
  runsDir: string;
  messageBus: string;
  taskFolder: string;
  runFolder: string;
  conductorUrl?: string;
}

export interface BuildAgentEnvOptions {
  agentType: string;
  /** The inherited environment (normally process.env). */
  base: Record<string, string | undefined>;
  jrun: JrunValues;
  /** Config token; exported as the type's variable when non-blank. */
  token?: string;
  /** Directory holding `run-agent`, prepended to PATH unless already present. */
  binDir?: string;
  /** Caller environment (e.g. an API request's map): applied last, overrides everything. */
  callerEnv?: Record<string, string>;
}

/** Agent key variables: an agent only ever sees its own (plus OPENAI_ORG_ID for codex). */
const AGENT_KEY_VARS = ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'GEMINI_API_KEY', 'PERPLEXITY_API_KEY', 'XAI_API_KEY', 'OPENAI_ORG_ID'];

/**
 * Builds the environment of one agent run in the upstream order: inherited → JRUN_* (plus the
 * seeds' short names) → token → PATH prepend → caller env → drop CLAUDECODE → drop foreign keys.
 * Returns a new object with keys in sorted order.
 */
export function buildAgentEnv(opts: BuildAgentEnvOptions): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(opts.base)) {
    if (key.trim() !== '' && value !== undefined) env[key] = value;
  }
  Object.assign(env, jrunVariables(opts.jrun));

  const tokenVar = tokenEnvVarFor(opts.agentType);
  const token = opts.token?.trim();
  if (tokenVar && token) env[tokenVar] = token;

  if (opts.binDir) env.PATH = prependPathDir(env.PATH ?? '', opts.binDir);

  for (const [key, value] of Object.entries(opts.callerEnv ?? {})) {
    if (key.trim() !== '') env[key.trim()] = value;
  }

  delete env.CLAUDECODE;
  return sortKeys(stripForeignAgentKeys(env, opts.agentType));
}

export function jrunVariables(v: JrunValues): Record<string, string> {
  const vars: Record<string, string> = {
    JRUN_PROJECT_ID: v.projectId,
    JRUN_TASK_ID: v.taskId,
    JRUN_ID: v.runId,
    JRUN_PARENT_ID: v.parentRunId ?? '',
    JRUN_RUNS_DIR: v.runsDir,
    JRUN_MESSAGE_BUS: v.messageBus,
    JRUN_TASK_FOLDER: v.taskFolder,
    JRUN_RUN_FOLDER: v.runFolder,
    // Short names from the seed documents; prompts written against them keep working.
    MESSAGE_BUS: v.messageBus,
    TASK_FOLDER: v.taskFolder,
    RUN_FOLDER: v.runFolder,
  };
  if (v.conductorUrl) {
    vars.JRUN_CONDUCTOR_URL = v.conductorUrl;
    vars.CONDUCTOR_URL = v.conductorUrl;
  }
  return vars;
}

/** Prepends `dir` unless it already appears anywhere in `path`; an empty PATH becomes `dir`. */
export function prependPathDir(path: string, dir: string): string {
  if (path === '') return dir;
  if (path.split(delimiter).includes(dir)) return path;
  return `${dir}${delimiter}${path}`;
}

/**
 * Removes agent key variables (case-insensitive) other than the agent's own. Types without a key
 * variable (`command`) receive none of them.
 */
export function stripForeignAgentKeys(env: Record<string, string>, agentType: string): Record<string, string> {
  const own = tokenEnvVarFor(agentType)?.toUpperCase();
  const keepOrg = agentType.trim().toLowerCase() === 'codex';
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    const upper = key.toUpperCase();
    const isAgentKey = AGENT_KEY_VARS.includes(upper);
    if (isAgentKey && upper !== own && !(keepOrg && upper === 'OPENAI_ORG_ID')) continue;
    out[key] = value;
  }
  return out;
}

function sortKeys(env: Record<string, string>): Record<string, string> {
  const sorted: Record<string, string> = {};
  for (const key of Object.keys(env).sort()) sorted[key] = env[key];
  return sorted;
}
