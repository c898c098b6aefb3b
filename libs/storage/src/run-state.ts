import { isCancelled } from './task-files';
import type { RunInfo, RunStatus } from './run-info';

/**
 * What a run ended as, for people (issue #12): run-info keeps upstream's three statuses, where a
 * stopped agent is `failed` with exit 143. A failed run whose error summary says it was stopped
 * (written by the runner or the stop of an orphan: "stopped by …") is `stopped`, or `cancelled`
 * when its task carries the CANCELLED marker; a running run waiting for admission is `queued`.
 * Other statuses pass through.
 */
export type RunState = RunStatus | 'stopped' | 'cancelled' | 'queued';

export const STOPPED_SUMMARY_PREFIX = 'stopped by ';

export function runState(info: Pick<RunInfo, 'status' | 'error_summary' | 'queued_reason'>, taskDir?: string): RunState {
  const status = (info.status?.trim() || 'unknown') as RunStatus;
  // issue #33: a running run whose agent waits for admission (reason in queued_reason)
  if (status === 'running' && info.queued_reason) return 'queued';
  if (status !== 'failed' || !info.error_summary?.startsWith(STOPPED_SUMMARY_PREFIX)) return status;
  return taskDir !== undefined && isCancelled(taskDir) ? 'cancelled' : 'stopped';
}

/** The exit code to show: none while the run has not ended (run-info holds -1 then). */
export function shownExitCode(info: Pick<RunInfo, 'status' | 'exit_code'>): number | null {
  return info.status === 'running' || info.status === 'unknown' ? null : info.exit_code;
}
