import type { FlatRun } from '../api/types';
import { parseTime } from './time';

export type DisplayStatus = 'running' | 'queued' | 'needs_input' | 'held' | 'completed' | 'failed' | 'blocked' | 'stopped' | 'unknown' | 'idle';

export const DISPLAY_STATUSES: DisplayStatus[] = ['running', 'queued', 'needs_input', 'held', 'completed', 'failed', 'blocked', 'stopped', 'unknown', 'idle'];

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
    case 'cancelled':
      return 'stopped';
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
