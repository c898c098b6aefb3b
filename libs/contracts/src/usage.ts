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

/** GET /api/projects/:p/tasks/:t/usage (#18). */
export interface UsageReport {
  project_id?: string;
  task_id?: string;
  runs: number;
  usage: UsageTotals;
  total_tokens: number;
  tree?: { runs: number; usage: UsageTotals; total_tokens: number };
  by_agent: { key: string; runs: number; usage: UsageTotals; total_tokens: number }[];
}
