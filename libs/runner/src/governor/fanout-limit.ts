import { dirname, join } from 'node:path';
import { type AppConfig, withFileLock } from '@app/storage';
import { allRuns, descendantRuns, isUnfinished, ScannedRun } from '../run-scan';
import { RunnerError } from '../runner.errors';
import { readTaskSettings, TaskSettings } from '../usage/task-settings';

type FanoutKey = 'max_children_per_run' | 'max_runs_per_tree';

/** The smallest limit of config `defaults.<key>` and `<key>` of each task on the chain, with where it was set. */
function effectiveLimit(key: FanoutKey, config: AppConfig | undefined, taskDirs: string[]): { limit: number; source: string } | undefined {
  const configured = config?.defaults?.[key];
  let best = configured && configured > 0 ? { limit: configured, source: `config defaults.${key}` } : undefined;
  for (const dir of taskDirs) {
    const own = (readTaskSettings(dir) as TaskSettings)[key];
    if (own !== undefined && (!best || own < best.limit)) best = { limit: own, source: `${key} of task ${dir.split('/').pop()}` };
  }
  return best;
}

/**
 * Fan-out governor (issue #33) beyond depth: a new child of `parentRunId` is refused when the parent
 * already has `max_children_per_run` unfinished children, or when its task tree (the root run and
 * all its descendants, finished or not) already holds `max_runs_per_tree` runs. Limits: config
 * `defaults.<key>` and `<key>` of every task on the chain (TASK-SETTINGS.yaml); the smallest wins.
 */
export function checkFanout(root: string, taskDir: string, parentRunId: string, opts: { config?: AppConfig }): void {
  const runs = allRuns(root);
  const byId = new Map<string, ScannedRun>(runs.map((r) => [r.info.run_id, r]));
  const taskDirs = [taskDir];
  let top = parentRunId;
  const seen = new Set<string>();
  for (let current: string | undefined = parentRunId; current && !seen.has(current); ) {
    seen.add(current);
    top = current;
    const run = byId.get(current);
    if (!run) break;
    const runTask = dirname(dirname(run.dir));
    if (!taskDirs.includes(runTask)) taskDirs.push(runTask);
    current = run.info.parent_run_id;
  }
  const children = effectiveLimit('max_children_per_run', opts.config, taskDirs);
  if (children) {
    const live = runs.filter((r) => r.info.parent_run_id === parentRunId && isUnfinished(r.info)).length;
    if (live >= children.limit) {
      throw new RunnerError('FANOUT_LIMIT', `children per run limit (${children.limit}) reached: run ${parentRunId} has ${live} unfinished children (limit set by ${children.source})`);
    }
  }
  const tree = effectiveLimit('max_runs_per_tree', opts.config, taskDirs);
  if (tree) {
    const total = descendantRuns(runs, top).length + (byId.has(top) ? 1 : 0);
    if (total >= tree.limit) {
      throw new RunnerError('FANOUT_LIMIT', `runs per task tree limit (${tree.limit}) reached: the tree of run ${top} has ${total} runs (limit set by ${tree.source})`);
    }
  }
}

/** The lock of a task tree's fan-out counting, in the task folder of the tree's top run. */
export const FANOUT_LOCK_FILE = 'FANOUT.lock';
const FANOUT_LOCK_TIMEOUT_MS = 30_000;

/** The task folder of the top run of `parentRunId`'s tree (the parent chain never changes), else `taskDir`. */
function treeTaskDir(root: string, taskDir: string, parentRunId: string): string {
  const byId = new Map<string, ScannedRun>(allRuns(root).map((r) => [r.info.run_id, r]));
  let dir = taskDir;
  const seen = new Set<string>();
  for (let current: string | undefined = parentRunId; current && !seen.has(current); ) {
    seen.add(current);
    const run = byId.get(current);
    if (!run) break;
    dir = dirname(dirname(run.dir));
    current = run.info.parent_run_id;
  }
  return dir;
}

/**
 * checkFanout and `create` (which must make the new child count: allocate its run folder and
 * write its run-info) under one flock on FANOUT.lock in the tree's top task folder, so two
 * children started at the same instant cannot both pass a limit (issue #33).
 */
export async function admitChild<T>(root: string, taskDir: string, parentRunId: string, opts: { config?: AppConfig }, create: () => T): Promise<T> {
  const lockPath = join(treeTaskDir(root, taskDir, parentRunId), FANOUT_LOCK_FILE);
  return withFileLock(lockPath, { timeoutMs: FANOUT_LOCK_TIMEOUT_MS }, () => {
    checkFanout(root, taskDir, parentRunId, opts);
    return create();
  });
}
