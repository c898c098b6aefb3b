import type { RunInfo } from '@app/storage';
import { RunRecord, toFlatRun } from './shapes';

/**
 * `runs/flat` serialises each run once (issue #15): the storage index hands out the same RunInfo
 * object while run-info.yaml is unchanged (mtime, size, inode), so the run's JSON is kept beside
 * that object and a changed file, being a new object, is serialised again. A failed run's
 * display_status may depend on the task's CANCELLED marker (runState), so it is never kept.
 */
const cache = new WeakMap<RunInfo, { runId: string; taskId: string; json: string }>();

export function flatRunJson(r: RunRecord): string {
  const kept = cache.get(r.info);
  if (kept && kept.runId === r.runId && kept.taskId === r.taskId) return kept.json;
  const json = JSON.stringify(toFlatRun(r));
  if (r.info.status !== 'failed') cache.set(r.info, { runId: r.runId, taskId: r.taskId, json });
  return json;
}

/** The `{ "runs": [...] }` body of runs/flat, from the kept JSON of each run. */
export function flatRunsBody(runs: RunRecord[]): string {
  return `{"runs":[${runs.map(flatRunJson).join(',')}]}`;
}
