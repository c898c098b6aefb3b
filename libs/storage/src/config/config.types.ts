import type { ScheduleConfig, TriggerConfig } from './triggers-config';
import type { ForgeConfig } from './forge-config';
/** Agent types the runner knows (cli-storage.md §5.2 plus D17's generic `command`). */
export const AGENT_TYPES = ['claude', 'codex', 'gemini', 'perplexity', 'xai', 'command'] as const;
export type AgentType = (typeof AGENT_TYPES)[number];
export const CLI_AGENT_TYPES = ['claude', 'codex', 'gemini'] as const;
export const REST_AGENT_TYPES = ['perplexity', 'xai'] as const;

/** Env var that carries each type's token to the agent (runner-agents.md / cli-storage.md §2.3). */
export const AGENT_TOKEN_ENV: Record<string, string> = {
  claude: 'ANTHROPIC_API_KEY',
  codex: 'OPENAI_API_KEY',
  gemini: 'GEMINI_API_KEY',
  perplexity: 'PERPLEXITY_API_KEY',
  xai: 'XAI_API_KEY',
};

export interface AgentConfig {
  /** The key under `agents:` (or the HCL block name). */
  name: string;
  /** Trimmed, lower-cased; defaults to the name. */
  type: string;
  token?: string;
  token_file?: string;
  base_url?: string;
  model?: string;
  /** type `command` (D17): executable to run with the prompt on stdin. */
  command?: string;
  /** type `command` (D17): arguments passed to `command`. */
  args?: string[];
  /** claude/codex/gemini: give the agent our MCP server (`run-agent mcp`) for each run. */
  mcp?: boolean;
  /** Per-agent override of `defaults.isolation`. */
  isolation?: IsolationMode;
  /** Per-agent override of `defaults.sandbox` (docs/sandbox.md). */
  sandbox?: SandboxMode;
  /** Extra hosts (`host` = ports 80/443, `host:port`) this agent's sandbox may reach, beyond `sandbox.allow_hosts`. */
  allow_hosts?: string[];
}

/** `bwrap`: the CLI agent runs in a bubblewrap sandbox behind the egress proxy (docs/sandbox.md). */
export const SANDBOX_MODES = ['none', 'bwrap'] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];

/** `projects.<id>` (docs/sandbox.md): a project may require `sandbox: bwrap` for all its agents. */
export interface ProjectConfig {
  sandbox?: SandboxMode;
}

/** `sandbox:` section (docs/sandbox.md): what a sandboxed agent may see and reach. */
export interface SandboxConfig {
  /** Paths under the home folder the agent may read (the rest of the home is hidden). */
  home_read: string[];
  /** Paths under the home folder the agent may write (e.g. its own config folder). */
  home_write: string[];
  /** Hosts every sandboxed agent may reach through the egress proxy (`host` = ports 80/443, `host:port`). */
  allow_hosts: string[];
  /** RLIMIT_NPROC inside the sandbox (0 = not set). Counts all processes of the user. */
  max_processes: number;
}

/** `worktree`: each task runs in its own git worktree (docs/worktrees.md); `none`: in its working directory. */
export type IsolationMode = 'worktree' | 'none';

/** `worktree:` section (docs/worktrees.md): shell commands run with the worktree as cwd. */
export interface WorktreeConfig {
  setup?: string;
  teardown?: string;
  /** Run in the merge candidate after each merge; a non-zero exit blocks the merge. */
  verify?: string;
}

export interface DiversificationConfig {
  enabled: boolean;
  strategy: string;
  agents: string[];
  weights: number[];
  fallback_on_failure: boolean;
}

export interface DefaultsConfig {
  agent: string;
  timeout: number;
  max_concurrent_runs: number;
  max_concurrent_root_tasks: number;
  diversification?: DiversificationConfig;
  isolation?: IsolationMode;
  /** `none` (default) or `bwrap`; an agent's own `sandbox` wins. */
  sandbox?: SandboxMode;
  /** Budgets of a task tree (issue #18); 0/'' = none. A task's own flags win. */
  max_tokens?: number;
  max_cost_usd?: number;
  /** Go duration text. */
  max_wall_time?: string;
  /** `continue`: the next Ralph attempt resumes the agent's own session; default `fresh`. */
  resume_mode?: string;
  /** Timeout of a completion criterion without its own (Go duration; issue #33); default 10m. */
  done_criteria_timeout?: string;
  /** Fan-out governor (issue #33): a child run's parent chain must stay below this (default 16; 1..1000). */
  max_delegation_depth?: number;
  /** Fan-out governor: a run may have at most this many unfinished child runs (issue #33; unset = no limit). */
  max_children_per_run?: number;
  /** Fan-out governor: a task tree (root run and all descendants) may hold at most this many runs (unset = no limit). */
  max_runs_per_tree?: number;
  /** Memory-aware admission (issue #33): an agent starts only while MemAvailable is at least this many bytes (config text like 2GiB; unset = off). */
  min_available_memory?: number;
}

export interface SseConfig {
  poll_interval_ms: number;
  discovery_interval_ms: number;
  heartbeat_interval_s: number;
  max_clients_per_run: number;
}

export interface ApiConfig {
  host: string;
  port: number;
  cors_origins: string[];
  /** Host names (optionally `name:port`) the server answers besides loopback (DNS-rebinding defence). */
  allowed_hosts: string[];
  auth_enabled: boolean;
  api_key: string;
  /** `/metrics` answers without the API key (for a scraper that cannot send one). */
  metrics_public: boolean;
  sse: SseConfig;
  /** Largest HTTP request body the server accepts, in bytes (0 = the server's default, 1 MiB). */
  max_request_body_bytes: number;
  /** The server log's level: error, warn, info or debug ('' = the default, info). */
  log_level: string;
}

export interface StorageConfig {
  /** Absolute after loading ('' when not configured). */
  runs_dir: string;
  extra_roots: string[];
  /** Largest message-bus body accepted by writers, in bytes (0 = the message bus default, 16 MiB). */
  max_message_body_bytes: number;
}

export interface WebhookConfig {
  url: string;
  events: string[];
  secret: string;
  /** Standard Webhooks signing secret (`whsec_<base64>`): deliveries also carry `webhook-signature`. */
  standard_webhooks_secret: string;
  /** Go duration text, default `10s`. */
  timeout: string;
  /** `timeout` in milliseconds. */
  timeoutMs: number;
}

export interface AppConfig {
  agents: Record<string, AgentConfig>;
  defaults: DefaultsConfig;
  api: ApiConfig;
  storage: StorageConfig;
  webhook?: WebhookConfig;
  worktree?: WorktreeConfig;
  sandbox?: SandboxConfig;
  /** `projects.<id>`: per-project settings (only `sandbox` for now; docs/sandbox.md). */
  projects?: Record<string, ProjectConfig>;
  /** `schedules:` (docs/triggers.md): tasks started on a cron expression. */
  schedules?: Record<string, ScheduleConfig>;
  /** `triggers:` (docs/triggers.md): tasks started by an HTTP call with the trigger's token. */
  triggers?: Record<string, TriggerConfig>;
  /** `forge:` (docs/triggers.md): GitHub webhooks in, pull requests out. */
  forge?: ForgeConfig;
  /** Absolute path of the file this config was loaded from. */
  path?: string;
}

export const API_DEFAULTS = { host: '127.0.0.1', port: 14355 } as const;
/** The server log's levels, most severe first (`--log-level`, `CONDUCTOR_LOG_LEVEL`, `api.log_level`). */
export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const DEFAULT_LOG_LEVEL: LogLevel = 'info';
export function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}
export const SSE_DEFAULTS: SseConfig = {
  poll_interval_ms: 500,
  discovery_interval_ms: 1000,
  heartbeat_interval_s: 30,
  max_clients_per_run: 10,
};
export const WEBHOOK_DEFAULT_TIMEOUT = '10s';
