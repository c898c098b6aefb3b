import type { FlatRun } from '../api/types';
import { parseTime } from './time';

export type DisplayStatus = 'running' | 'queued' | 'needs_input' | 'held' | 'completed' | 'failed' | 'blocked' | 'stopped' | 'cancelled' | 'corrupt' | 'unknown' | 'idle';

export const DISPLAY_STATUSES: DisplayStatus[] = ['running', 'queued', 'needs_input', 'held', 'completed', 'failed', 'blocked', 'stopped', 'cancelled', 'corrupt', 'unknown', 'idle'];

/**
 * The status to show for a run: the server's added `display_status` (stopped, cancelled) when
 * present, else upstream's `status` (where a stopped run is `failed` with exit 143).
 */
export function runDisplayStatus(run: Pick<FlatRun, 'status' | 'display_status'>): string {
  return run.display_status || run.status;
}

/** The exit code to show: none while the run has not ended (the API sends -1 then). */
export function shownExitCode(run: Pick<FlatRun, 'status' | 'exit_code'>): string {
  return normalizeStatus(run.status) === 'running' || run.exit_code === -1 || run.exit_code === undefined ? '' : String(run.exit_code);
}
/** Maps any server status spelling (run or task vocabularies, api.md §A.2) onto what the UI shows. */
export function normalizeStatus(raw: string | undefined | null): DisplayStatus {
  switch ((raw ?? '').toLowerCase()) {
    case 'running':
    case 'active':
      return 'running';
    case 'partial_failure':
      return 'running';
    case 'queued':
    case 'postponed':
      return 'queued';
    case 'completed':
    case 'all_finished':
    case 'done':
    case 'success':
      return 'completed';
    case 'failed':
    case 'error':
      return 'failed';
    case 'blocked':
      return 'blocked';
    case 'needs_input':
      return 'needs_input';
    // #18: the loop waits (rate limit, paused by hand) or was stopped by its budget
    case 'rate_limited':
    case 'paused':
    case 'budget_exceeded':
      return 'held';
    case 'stopped':
      return 'stopped';
    case 'cancelled':
    case 'canceled':
      return 'cancelled';
    // #29: a record file that cannot be parsed (the server sends corrupt_reason beside it)
    case 'corrupt':
      return 'corrupt';
    case '':
    case '-':
    case 'idle':
      return 'idle';
    default:
      return 'unknown';
  }
}

/** Time of the run's latest activity: its end when set, else its start. */
export function runActivity(run: FlatRun): number {
  return parseTime(run.end_time) ?? parseTime(run.start_time) ?? 0;
}

/**
 * Status of a task derived from its runs: running when any run runs, else the status of the
 * latest run (by start time, then id); a task without runs is idle.
 */
export function deriveTaskStatus(runs: readonly FlatRun[], done = false): DisplayStatus {
  if (runs.length === 0) return done ? 'completed' : 'idle';
  if (runs.some((r) => normalizeStatus(r.status) === 'running')) return 'running';
  if (runs.some((r) => normalizeStatus(r.status) === 'queued')) return 'queued';
  let latest = runs[0];
  for (const run of runs) if (compareRuns(run, latest) > 0) latest = run;
  const status = normalizeStatus(latest.status);
  return done && status !== 'failed' ? 'completed' : status;
}

/** Chronological order of runs: start time, then run id (ids sort by creation time). */
export function compareRuns(a: FlatRun, b: FlatRun): number {
  const d = (parseTime(a.start_time) ?? 0) - (parseTime(b.start_time) ?? 0);
  if (d !== 0) return d;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export function parseTimeOrZero(value: string | undefined | null): number {
  return parseTime(value) ?? 0;
}

/**
 * The run counts of the summary cards, from the same (stream-patched) runs as the tree, so the
 * cards never disagree with it (the polled project stats lag a stop by up to one poll).
 */
export function runCounts(runs: readonly Pick<FlatRun, 'status'>[]): { runs: number; running: number; completed: number; failed: number; stopped: number } {
  const counts = { runs: runs.length, running: 0, completed: 0, failed: 0, stopped: 0 };
  for (const r of runs) {
    const s = normalizeStatus(r.status);
    if (s === 'running') counts.running++;
    else if (s === 'completed') counts.completed++;
    else if (s === 'failed') counts.failed++;
    else if (s === 'stopped' || s === 'cancelled') counts.stopped++;
  }
  return counts;
}
