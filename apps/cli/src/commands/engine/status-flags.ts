/**
 * The flags of `run-agent status`, declared once for StatusCommand and the Nest-free hot path
 * (apps/cli/src/fast). Plain module: no NestJS imports.
 */
import type { FlagSpec } from '@app/boot';
import { SCOPE_FLAGS, type ScopeFlags } from './support/scope-flags';

export const STATUS_FLAGS = {
  ...SCOPE_FLAGS,
  tree: {
    flags: '--tree',
    type: 'boolean',
    description: 'each task with its latest run as a tree, sub-agent runs (parent_run_id) indented beneath the run that started them; with --json nested as "tree", each run with "children"',
  },
  status: {
    flags: '--status <filter>',
    type: 'string',
    description: 'keep rows by status: running|active, completed, failed, stopped, cancelled, unknown, queued, blocked, needs_input, rate_limited, paused, budget_exceeded, corrupt, done|all_finished, pending',
  },
  json: { flags: '--json', type: 'boolean', description: 'print {"tasks":[...]} as JSON' },
  concise: { flags: '--concise', type: 'boolean', description: 'tab-separated rows without header: task_id status exit_code latest_run done pid_alive' },
  activity: { flags: '--activity', type: 'boolean', description: 'add activity signals: latest bus message, output activity, meaningful-signal age, drift risk' },
  usage: { flags: '--usage', type: 'boolean', description: "add TOKENS (input + output) and COST_USD of each task's runs (--json always carries `usage`)" },
  driftAfter: {
    flags: '--drift-after <duration>',
    type: 'string',
    description: 'with --activity: a running task without a FACT/DECISION/ERROR/REVIEW message for this long is at risk (default 20m)',
  },
} as const satisfies Record<string, FlagSpec>;

export interface StatusOptions extends ScopeFlags {
  status?: string;
  json?: boolean;
  concise?: boolean;
  activity?: boolean;
  usage?: boolean;
  driftAfter?: string;
  tree?: boolean;
}
