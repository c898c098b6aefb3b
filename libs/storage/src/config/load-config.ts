import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { StorageError } from '../storage.errors';
import {
  AgentConfig,
  API_DEFAULTS,
  AppConfig,
  DiversificationConfig,
  IsolationMode,
  ProjectConfig,
  SANDBOX_MODES,
  SandboxConfig,
  SandboxMode,
  SSE_DEFAULTS,
  WEBHOOK_DEFAULT_TIMEOUT,
  WebhookConfig,
  WorktreeConfig,
} from './config.types';
import { admissionDefaults, budgetDefaults } from './defaults-config';
import { parseGoDuration } from './duration';
import { ConfigProblem, configKeyName, formatConfigProblem, RawReader, readRawConfig } from './raw-config';
import { resolveConfigPath } from './paths';
import { isValidationProblem, validateConfig } from './validate-config';
import { configFileFor } from './settings';
import { validateProjectId } from '../ids';
import { buildSchedules, buildTriggers } from './triggers-config';
import { buildForge, GITHUB_TOKEN_ENV, type GithubForgeConfig } from './forge-config';

export interface LoadConfigOptions {
  /**
   * Strict (runs): full validation, at least one agent, token files read. Lenient (server, runs-root
   * lookup, bus limits): the same parsing and validation without those two. Both throw on any
   * problem; nothing falls back to defaults. Default true.
   */
  strict?: boolean;
  env?: NodeJS.ProcessEnv;
  /** The server: read its own secrets (the GitHub token of `forge.github`) even when lenient. Strict implies it. */
  serverSecrets?: boolean;
}

// Re-exported: the finders live in paths.ts so YAML-free callers (bus post's fast path) can use them.
export { findConfigFile, homeConfigPath } from './paths';

function envTokenName(agentName: string): string {
  return `CONDUCTOR_AGENT_${agentName.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_TOKEN`;
}

function buildAgents(r: RawReader): Record<string, AgentConfig> {
  const agents: Record<string, AgentConfig> = {};
  for (const name of Object.keys(r.map(['agents'])).sort()) {
    const p = ['agents', name];
    r.map(p);
    const agent: AgentConfig = { name, type: (r.str([...p, 'type']) || name).trim().toLowerCase() };
    for (const key of ['token', 'token_file', 'base_url', 'model', 'command'] as const) {
      const v = r.str([...p, key]);
      if (v !== '') agent[key] = v;
    }
    if (r.get([...p, 'args']) !== undefined) agent.args = r.strList([...p, 'args']);
    if (r.get([...p, 'mcp']) !== undefined) agent.mcp = r.bool([...p, 'mcp']);
    const isolation = isolationMode(r, [...p, 'isolation']);
    if (isolation) agent.isolation = isolation;
    const sandbox = sandboxMode(r, [...p, 'sandbox']);
    if (sandbox) agent.sandbox = sandbox;
    if (r.get([...p, 'allow_hosts']) !== undefined) agent.allow_hosts = hostList(r, [...p, 'allow_hosts']);
    agents[name] = agent;
  }
  return agents;
}

function buildDiversification(r: RawReader): DiversificationConfig | undefined {
  const p = ['defaults', 'diversification'];
  const v = r.get(p);
  if (v === undefined || v === null) return undefined;
  r.map(p);
  return {
    enabled: r.bool([...p, 'enabled']),
    strategy: r.str([...p, 'strategy']),
    agents: r.strList([...p, 'agents']),
    weights: r.intList([...p, 'weights']),
    fallback_on_failure: r.bool([...p, 'fallback_on_failure']),
  };
}

function isolationMode(r: RawReader, path: string[]): IsolationMode | undefined {
  const v = r.str(path).trim();
  if (v === '') return undefined;
  if (v !== 'worktree' && v !== 'none') return r.fail(path, `must be "worktree" or "none", got ${JSON.stringify(v)}`);
  return v;
}

function sandboxMode(r: RawReader, path: string[]): SandboxMode | undefined {
  const v = r.str(path).trim();
  if (v === '') return undefined;
  if (!(SANDBOX_MODES as readonly string[]).includes(v)) return r.fail(path, `must be one of ${SANDBOX_MODES.join(', ')}, got ${JSON.stringify(v)}`);
  return v as SandboxMode;
}

/** `host` or `host:port` entries, lower-cased; anything else (schemes, paths, wildcards) is refused. */
function hostList(r: RawReader, path: string[]): string[] {
  return r.strList(path).map((raw, i) => {
    const v = raw.trim().toLowerCase();
    const m = /^([a-z0-9.-]+|\[[0-9a-f:.]+\])(?::(\d{1,5}))?$/.exec(v);
    if (!m || (m[2] !== undefined && (Number(m[2]) < 1 || Number(m[2]) > 65535))) r.fail([...path, i], `must be a host or host:port, got ${JSON.stringify(raw)}`);
    return v;
  });
}

function buildSandbox(r: RawReader): SandboxConfig | undefined {
  const v = r.get(['sandbox']);
  if (v === undefined || v === null) return undefined;
  r.map(['sandbox']);
  const maxProcesses = r.int(['sandbox', 'max_processes']);
  if (maxProcesses < 0) r.fail(['sandbox', 'max_processes'], 'must not be negative');
  return {
    home_read: r.strList(['sandbox', 'home_read']),
    home_write: r.strList(['sandbox', 'home_write']),
    allow_hosts: hostList(r, ['sandbox', 'allow_hosts']),
    max_processes: maxProcesses,
  };
}

/** `projects.<id>.sandbox` (docs/sandbox.md); any other key under a project is refused (fail closed). */
function buildProjects(r: RawReader): Record<string, ProjectConfig> | undefined {
  const v = r.get(['projects']);
  if (v === undefined || v === null) return undefined;
  const out: Record<string, ProjectConfig> = {};
  for (const id of Object.keys(r.map(['projects'])).sort()) {
    const p = ['projects', id];
    try {
      validateProjectId(id);
    } catch (err) {
      r.fail(p, `not a valid project id: ${(err as Error).message}`);
    }
    const keys = Object.keys(r.map(p));
    const unknown = keys.find((k) => k !== 'sandbox');
    if (unknown !== undefined) r.fail([...p, unknown], 'unknown key (a project accepts only sandbox)');
    const sandbox = sandboxMode(r, [...p, 'sandbox']);
    out[id] = sandbox ? { sandbox } : {};
  }
  return out;
}

function buildWorktree(r: RawReader): WorktreeConfig | undefined {
  const v = r.get(['worktree']);
  if (v === undefined || v === null) return undefined;
  r.map(['worktree']);
  const out: WorktreeConfig = {};
  for (const key of ['setup', 'teardown', 'verify'] as const) {
    const cmd = r.str(['worktree', key]).trim();
    if (cmd) out[key] = cmd;
  }
  return out;
}

function buildWebhook(r: RawReader): WebhookConfig | undefined {
  const v = r.get(['webhook']);
  if (v === undefined || v === null) return undefined;
  r.map(['webhook']);
  const timeout = r.str(['webhook', 'timeout']);
  let timeoutMs = 10_000;
  try {
    timeoutMs = parseGoDuration(timeout || WEBHOOK_DEFAULT_TIMEOUT);
  } catch {
    // reported by validation (strict); lenient loads keep the default
  }
  return {
    url: r.str(['webhook', 'url']),
    events: r.strList(['webhook', 'events']),
    secret: r.str(['webhook', 'secret']),
    standard_webhooks_secret: r.str(['webhook', 'standard_webhooks_secret']),
    timeout,
    timeoutMs,
  };
}

function build(r: RawReader): AppConfig {
  const agents = buildAgents(r);
  const sse = {
    poll_interval_ms: r.int(['api', 'sse', 'poll_interval_ms']),
    discovery_interval_ms: r.int(['api', 'sse', 'discovery_interval_ms']),
    heartbeat_interval_s: r.int(['api', 'sse', 'heartbeat_interval_s']),
    max_clients_per_run: r.int(['api', 'sse', 'max_clients_per_run']),
  };
  const hasPort = r.get(['api', 'port']) !== undefined && r.get(['api', 'port']) !== null;
  return {
    agents,
    defaults: {
      agent: r.str(['defaults', 'agent']),
      timeout: r.int(['defaults', 'timeout']),
      max_concurrent_runs: r.int(['defaults', 'max_concurrent_runs']),
      max_concurrent_root_tasks: r.int(['defaults', 'max_concurrent_root_tasks']),
      diversification: buildDiversification(r),
      isolation: isolationMode(r, ['defaults', 'isolation']),
      sandbox: sandboxMode(r, ['defaults', 'sandbox']),
      ...budgetDefaults(r),
      ...admissionDefaults(r),
    },
    api: {
      host: r.str(['api', 'host']) || API_DEFAULTS.host,
      port: hasPort ? r.int(['api', 'port']) : API_DEFAULTS.port,
      cors_origins: r.strList(['api', 'cors_origins']),
      allowed_hosts: r.strList(['api', 'allowed_hosts']),
      auth_enabled: r.bool(['api', 'auth_enabled']),
      api_key: r.str(['api', 'api_key']),
      metrics_public: r.bool(['api', 'metrics_public']),
      sse,
      max_request_body_bytes: r.int(['api', 'max_request_body_bytes']),
      log_level: r.str(['api', 'log_level']).trim().toLowerCase(),
    },
    storage: {
      runs_dir: r.str(['storage', 'runs_dir']),
      extra_roots: r.strList(['storage', 'extra_roots']),
      max_message_body_bytes: r.int(['storage', 'max_message_body_bytes']),
    },
    webhook: buildWebhook(r),
    worktree: buildWorktree(r),
    sandbox: buildSandbox(r),
    projects: buildProjects(r),
    schedules: buildSchedules(r),
    triggers: buildTriggers(r),
    forge: buildForge(r),
  };
}

/** SSE zero values mean "use the default"; negative values are left for validation to reject. */
function applySseDefaults(cfg: AppConfig): void {
  for (const key of Object.keys(SSE_DEFAULTS) as (keyof typeof SSE_DEFAULTS)[]) {
    if (cfg.api.sse[key] === 0) cfg.api.sse[key] = SSE_DEFAULTS[key];
  }
}

/**
 * Loads a YAML config (or the HCL subset for `.hcl`), following §5.3: defaults, env token
 * overrides (CONDUCTOR_AGENT_<NAME>_TOKEN, CONDUCTOR_API_KEY), path resolution against the config
 * folder, then (strict only) validation and reading token files.
 * Errors: StorageError('INVALID_CONFIG', 'config <path>: <problem>').
 */
export function loadConfig(path: string, opts: LoadConfigOptions = {}): AppConfig {
  const strict = opts.strict ?? true;
  const env = opts.env ?? process.env;
  if (!path || path.trim() === '') throw new StorageError('INVALID_CONFIG', 'config path is empty');
  const abs = resolve(path);
  const fail = (problem: string, key?: string, pos?: ConfigProblem['pos']): never => {
    const own = key && problem.startsWith(`${key} `) ? problem.slice(key.length + 1) : problem;
    throw new StorageError('INVALID_CONFIG', formatConfigProblem(abs, own, key, pos));
  };
  let text: string;
  try {
    text = readFileSync(abs, 'utf8');
  } catch (err) {
    return fail(`read config: ${(err as Error).message}`);
  }
  let cfg: AppConfig;
  let reader: RawReader | undefined;
  try {
    const r = (reader = readRawConfig(abs, text));
    cfg = build(r);
    cfg.path = abs;
    applySseDefaults(cfg);
    for (const agent of Object.values(cfg.agents)) {
      const override = env[envTokenName(agent.name)];
      if (override && override.trim() !== '') {
        agent.token = override.trim();
        delete agent.token_file;
      }
    }
    const apiKey = env.CONDUCTOR_API_KEY;
    if (apiKey && apiKey.trim() !== '') {
      cfg.api.api_key = apiKey.trim();
      cfg.api.auth_enabled = true;
    }
    const baseDir = dirname(abs);
    for (const agent of Object.values(cfg.agents)) {
      if (agent.token_file) {
        try {
          agent.token_file = resolveConfigPath(agent.token_file, baseDir, env);
        } catch (err) {
          throw new ConfigProblem(`resolve token_file for agent ${JSON.stringify(agent.name)}: ${(err as Error).message}`, `agents.${agent.name}.token_file`, r.position(['agents', agent.name, 'token_file']));
        }
      }
      if (agent.command && (agent.command.startsWith('~') || agent.command.startsWith('.'))) {
        agent.command = resolveConfigPath(agent.command, baseDir, env);
      }
    }
    try {
      cfg.storage.runs_dir = resolveConfigPath(cfg.storage.runs_dir, baseDir, env);
    } catch (err) {
      throw new ConfigProblem(`resolve storage.runs_dir: ${(err as Error).message}`, 'storage.runs_dir', r.position(['storage', 'runs_dir']));
    }
    cfg.storage.extra_roots = cfg.storage.extra_roots.map((root, i) => {
      try {
        return resolveConfigPath(root, baseDir, env);
      } catch (err) {
        throw new ConfigProblem(`resolve storage.extra_roots[${i}]: ${(err as Error).message}`, `storage.extra_roots[${i}]`, r.position(['storage', 'extra_roots', i]));
      }
    });
    if (cfg.sandbox) {
      for (const key of ['home_read', 'home_write'] as const) {
        cfg.sandbox[key] = cfg.sandbox[key].map((p, i) => {
          try {
            return resolveConfigPath(p, baseDir, env);
          } catch (err) {
            throw new ConfigProblem(`resolve sandbox.${key}[${i}]: ${(err as Error).message}`, `sandbox.${key}[${i}]`, r.position(['sandbox', key, i]));
          }
        });
      }
    }
    const github = cfg.forge?.github;
    if (github?.token_file) github.token_file = resolveConfigPath(github.token_file, baseDir, env);
    validateConfig(cfg, { strict });
    if (github && (strict || opts.serverSecrets)) githubToken(github, env, r);
    if (!strict) return cfg;
    for (const agent of Object.values(cfg.agents)) {
      if (agent.token_file) agent.token = readTokenFile(agent.token_file, ['agents', agent.name, 'token_file'], `for agent ${JSON.stringify(agent.name)}`, r);
    }
  } catch (err) {
    if (err instanceof ConfigProblem) return fail(err.message, err.key, err.pos);
    if (isValidationProblem(err)) return fail(err.message, err.key && configKeyName(err.key), err.key && reader?.position(err.key));
    if (err instanceof StorageError) return fail(err.message);
    throw err;
  }
  return cfg;
}

function readTokenFile(path: string, key: string[], what: string, reader: RawReader): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigProblem(`read token_file ${what}: ${(err as Error).message}`, configKeyName(key), reader.position(key));
  }
  const token = text.trim();
  if (token === '') {
    throw new ConfigProblem(`read token_file ${what}: token file is empty: ${path}`, configKeyName(key), reader.position(key));
  }
  return token;
}

/** The GitHub token: CONDUCTOR_GITHUB_TOKEN, else `token_file`; a rule that opens pull requests needs one. */
function githubToken(github: GithubForgeConfig, env: NodeJS.ProcessEnv, r: RawReader): void {
  const key = ['forge', 'github', 'token_file'];
  const fromEnv = env[GITHUB_TOKEN_ENV]?.trim();
  if (fromEnv) github.token = fromEnv;
  else if (github.token_file) github.token = readTokenFile(github.token_file, key, 'of forge.github', r);
  const opens = Object.values(github.rules).find((rule) => rule.pull_request);
  if (opens && !github.token) {
    throw new ConfigProblem(`is required: rule ${JSON.stringify(opens.name)} opens pull requests (or set ${GITHUB_TOKEN_ENV})`, configKeyName(key), r.position(['forge', 'github']));
  }
}

/** Lenient load of the default-discovered config, if any (runs-root lookup); a broken file throws. */
export function loadDefaultConfig(cwd?: string, env: NodeJS.ProcessEnv = process.env): AppConfig | undefined {
  const path = configFileFor(undefined, { cwd, env });
  if (!path || !existsSync(path)) return undefined;
  return loadConfig(path, { strict: false, env });
}
