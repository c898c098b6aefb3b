export const M = {
  uptime: 'conductor_uptime_seconds',
  activeRuns: 'conductor_active_runs',
  completedRuns: 'conductor_completed_runs_total',
  failedRuns: 'conductor_failed_runs_total',
  busAppends: 'conductor_messagebus_appends_total',
  queuedRuns: 'conductor_queued_runs',
  apiRequests: 'conductor_api_requests_total',
  agentRuns: 'conductor_agent_runs_total',
  agentFallbacks: 'conductor_agent_fallbacks_total',
  tasksNeedingInput: 'conductor_tasks_needs_input',
  agentTokens: 'conductor_agent_tokens_total',
  agentCost: 'conductor_agent_cost_usd_total',
} as const;

/**
 * Names of earlier releases kept one more release as deprecated aliases (same value, HELP names the
 * replacement): gauges named like counters (`_total`), which promtool flags. Remove after the next release.
 */
export const DEPRECATED_ALIASES = {
  activeRunsTotal: 'conductor_active_runs_total',
  queuedRunsTotal: 'conductor_queued_runs_total',
} as const;
