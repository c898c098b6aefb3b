import type { CursorPaged } from './projects';

/** Token usage (run-info `usage:`), summed (#18). */
export interface UsageTotals {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_usd?: number;
  /** One run's usage only: the run was cut off mid-stream and this is what it had reported. */
  partial?: boolean;
}

/** One row of a usage report: the runs of one agent, project or task (`<project>/<task>`). */
export interface UsageRow {
  key: string;
  runs: number;
  usage: UsageTotals;
  total_tokens: number;
}

/**
 * GET /api/v1/usage, /api/projects/:p/usage, /api/projects/:p/tasks/:t/usage (#18). The totals
 * cover every selected run; the rows of `by_agent`, `by_project`, `by_task` are one cursor-paged
 * list (issue #29: agents, then projects, then tasks), `next_cursor` → `after=` while `has_more`.
 */
export interface UsageReport extends CursorPaged {
  project_id?: string;
  task_id?: string;
  since?: string;
  runs: number;
  usage: UsageTotals;
  total_tokens: number;
  tree?: { runs: number; usage: UsageTotals; total_tokens: number };
  by_agent: UsageRow[];
  by_project: UsageRow[];
  by_task: UsageRow[];
  /** Bytes the selected sandboxed runs moved through their egress proxies, per `host:port` (absent when none was sandboxed). */
  egress_bytes?: Record<string, number>;
}
