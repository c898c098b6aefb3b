import { isZeroWireTime as isZeroTime, timeKey, type CursorPage, type RunInfo } from '@app/storage';
import { RunRecord, toFlatRun } from './shapes';

/** The list key of a flat run: start time, then run id (the order of ProjectDataService.runs). */
export function flatRunKey(r: RunRecord): string {
  return timeKey(isZeroTime(r.info.start_time) ? 0 : r.info.start_time.getTime(), r.runId);
}

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

/** The last body sent per project: an unchanged list is answered with the same bytes, not joined and encoded again. */
const lastBody = new Map<string, { pieces: string[]; body: Buffer }>();

/** The `{ "runs": [...], "has_more": …, "next_cursor"?: … }` body of runs/flat (UTF-8), from the kept JSON of each run. */
export function flatRunsBody(projectId: string, { page, ...more }: CursorPage<RunRecord>): Buffer {
  const pieces = page.map(flatRunJson);
  pieces.push(JSON.stringify(more)); // the paging fields, compared with the runs
  const last = lastBody.get(projectId);
  if (last && samePieces(last.pieces, pieces)) return last.body;
  const body = Buffer.from(`{"runs":[${pieces.slice(0, -1).join(',')}],${pieces[pieces.length - 1].slice(1)}`);
  lastBody.set(projectId, { pieces, body });
  return body;
}

function samePieces(a: string[], b: string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
