/**
 * The flags of `run-agent list`, declared once for ListCommand and the Nest-free hot path
 * (apps/cli/src/fast). Plain module: no NestJS imports.
 */
import type { FlagSpec } from '@app/boot';
import { SCOPE_FLAGS, type ScopeFlags } from '../engine/support/scope-flags';

export const LIST_FLAGS = {
  ...SCOPE_FLAGS,
  status: {
    flags: '--status <filter>',
    type: 'string',
    description:
      'with --project: keep tasks whose latest status matches: running|active, done|all_finished, failed, stopped, cancelled, blocked, queued, partial_failure, needs_input, rate_limited, paused, budget_exceeded, corrupt',
  },
  json: { flags: '--json', type: 'boolean', description: 'print JSON: {"projects":[...]}, {"tasks":[...]} or {"runs":[...]}' },
  tree: {
    flags: '--tree',
    type: 'boolean',
    description:
      'with --project: each task with its runs as a tree, sub-agent runs (parent_run_id) indented beneath the run that started them; with --json nested as "tree" ("runs" with --task), each run with "children"',
  },
  usage: { flags: '--usage', type: 'boolean', description: "with --project: add TOKENS (input + output) and COST_USD of each task's runs (--json always carries `usage`)" },
  activity: {
    flags: '--activity',
    type: 'boolean',
    description: 'with --project: add activity columns (latest bus message, latest output, meaningful-signal age, drift risk and reason)',
  },
  driftAfter: {
    flags: '--drift-after <duration>',
    type: 'string',
    description: 'with --activity: a running task without a FACT/DECISION/ERROR/REVIEW message for this long is at risk (Go duration, default 20m)',
  },
} as const satisfies Record<string, FlagSpec>;

export interface ListOptions extends ScopeFlags {
  status?: string;
  json?: boolean;
  activity?: boolean;
  usage?: boolean;
  driftAfter?: string;
  tree?: boolean;
}
