import { dirname } from 'node:path';
import type { AppConfig } from '@app/storage';
import { DEFAULT_MAX_DELEGATION_DEPTH } from '../job-options';
import { findRunById } from '../run-scan';
import { RunnerError } from '../runner.errors';
import { readTaskSettings } from '../usage/task-settings';

/** The largest delegation depth a setting may ask for. */
export const MAX_DELEGATION_DEPTH_SETTING = 1000;

/**
 * D13 with the fan-out governor's setting (issue #33): the parent chain of a new child run must
 * stay below the delegation depth limit, the smallest of the job's own limit, config
 * `defaults.max_delegation_depth` (default 16) and `max_delegation_depth` of every task on the
 * chain (TASK-SETTINGS.yaml): a task's limit holds for its whole sub-tree.
 */
export function checkDelegationDepth(root: string, taskDir: string, parentRunId: string, opts: { jobLimit?: number; config?: AppConfig }): void {
  const configured = opts.config?.defaults?.max_delegation_depth;
  let limit = opts.jobLimit ?? (configured && configured > 0 ? configured : DEFAULT_MAX_DELEGATION_DEPTH);
  let source = opts.jobLimit === undefined && configured && configured > 0 ? 'config defaults.max_delegation_depth' : '';
  const consider = (dir: string): void => {
    const own = readTaskSettings(dir).max_delegation_depth;
    if (own !== undefined && own < limit) {
      limit = own;
      source = `max_delegation_depth of task ${dir.split('/').pop()}`;
    }
  };
  consider(taskDir);
  const seenTasks = new Set<string>([taskDir]);
  let depth = 0;
  let current: string | undefined = parentRunId;
  const seen = new Set<string>();
  while (current && !seen.has(current) && depth < MAX_DELEGATION_DEPTH_SETTING) {
    seen.add(current);
    depth++;
    const run = findRunById(root, current, taskDir);
    const runTask = run ? dirname(dirname(run.dir)) : undefined;
    if (runTask && !seenTasks.has(runTask)) {
      seenTasks.add(runTask);
      consider(runTask);
    }
    if (depth >= limit) {
      throw new RunnerError(
        'DEPTH_LIMIT',
        `delegation depth limit (${limit}) exceeded: a child of run ${parentRunId} would be at depth ${depth + 1}${source ? ` (limit set by ${source})` : ''}`,
      );
    }
    current = run?.info.parent_run_id;
  }
}
