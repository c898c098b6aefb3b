/** `GET /api/v1/status`. */
export interface ServerStatus {
  active_runs_count: number;
  uptime_seconds: number;
  /** The config's agent names (`agents:` keys), sorted. */
  configured_agents: string[];
  /** Config `defaults.agent`: the agent a task gets when none is named (omitted when unset). */
  default_agent?: string;
  version: string;
  /** True when the server can open GitHub pull requests (forge.github with a token; docs/triggers.md). */
  pull_requests?: boolean;
  running_tasks: { project_id: string; task_id: string; run_id: string; agent: string; started: string }[];
}
