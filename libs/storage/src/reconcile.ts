import { closeSync, openSync, rmSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { LivenessProbe } from './liveness';
import { createLivenessProbe } from './seams.providers';
import { idsFromRunInfoPath, readRunInfo, RunInfo, writeRunInfo } from './run-info';
import { StorageError } from './storage.errors';
import { hasDoneFile } from './task-files';
import { isLockOnPath, tryFlock, unflock } from './file-lock';
import { RUNS_DIR_NAME } from './layout-names';

const STALE_EXIT_CODE = -1;
export const STALE_NOT_ALIVE_SUMMARY = 'reconciled stale running status: process is not alive';
export const STALE_DONE_SUMMARY = 'reconciled stale running status: task DONE marker is present';

/** The task folder of `…/<task>/runs/<run>/run-info.yaml`, if the path has that shape. */
export function taskDirOfRunInfo(path: string): string | undefined {
  const runsDir = dirname(dirname(path));
  return basename(runsDir) === RUNS_DIR_NAME ? dirname(runsDir) : undefined;
}

/** The run-info at `path`, or undefined when the run folder has none (other read errors throw). */
export function readRunInfoIfExists(path: string): RunInfo | undefined {
  try {
    return readRunInfo(path);
  } catch (err) {
    if (err instanceof StorageError && err.code === 'NOT_FOUND') return undefined;
    throw err;
  }
}

/**
 * The record readers report for a run-info.yaml that cannot be parsed: status `corrupt` with the
 * reason, ids from the path. One bad record is that record's problem: listings show it and go on.
 * Nothing writes this view back (writeRunInfo refuses it); the file stays as evidence.
 */
export function corruptRunInfo(path: string, reason: string): RunInfo {
  return { ...synthesizeRunInfo(path), status: 'corrupt', corrupt_reason: reason };
}

/**
 * The run-info at `path`; the corrupt view when it cannot be parsed or is refused as a record (a
 * FIFO, a device, a symlink out of the root); undefined when absent (other read errors throw).
 */
export function readRunInfoOrCorrupt(path: string): RunInfo | undefined {
  try {
    return readRunInfoIfExists(path);
  } catch (err) {
    if (err instanceof StorageError && (err.code === 'CORRUPT' || err.code === 'NOT_REGULAR_FILE')) return corruptRunInfo(path, err.message);
    throw err;
  }
}

/** The record readers report for a run folder without run-info.yaml. */
export function synthesizeRunInfo(path: string): RunInfo {
  const ids = idsFromRunInfoPath(path);
  return {
    version: 0,
    run_id: ids?.run_id ?? basename(dirname(path)),
    project_id: ids?.project_id ?? '',
    task_id: ids?.task_id ?? '',
    agent: '',
    pid: 0,
    pgid: 0,
    start_time: new Date('0001-01-01T00:00:00Z'),
    end_time: new Date('0001-01-01T00:00:00Z'),
    exit_code: 0,
    status: 'unknown',
    agent_version: '',
  };
}

function markCompletedByDone(info: RunInfo, now: Date): void {
  info.status = 'completed';
  if (info.end_time.getUTCFullYear() <= 1) info.end_time = now;
  if (info.exit_code < 0) info.exit_code = 0;
  const summary = (info.error_summary ?? '').trim();
  if (summary === '' || summary === STALE_NOT_ALIVE_SUMMARY) info.error_summary = STALE_DONE_SUMMARY;
}

/** Applies §3.7 healing to `info` in place; returns true when something changed. */
export function reconcileRunInfo(info: RunInfo, taskDone: boolean, probe: LivenessProbe, now = new Date()): boolean {
  if (info.status === 'running' && (info.pid > 0 || info.pgid > 0)) {
    if (probe.isRunAlive(info)) return false;
    if (taskDone) {
      markCompletedByDone(info, now);
    } else {
      info.status = 'failed';
      if (info.end_time.getUTCFullYear() <= 1) info.end_time = now;
      if (info.exit_code === 0) info.exit_code = STALE_EXIT_CODE;
      if ((info.error_summary ?? '').trim() === '') info.error_summary = STALE_NOT_ALIVE_SUMMARY;
    }
    return true;
  }
  if (info.status === 'failed' && info.exit_code === STALE_EXIT_CODE && taskDone) {
    markCompletedByDone(info, now);
    return true;
  }
  return false;
}

/**
 * Reads a run-info and heals a stale `running` run whose processes are gone (and a failed −1 run
 * of a DONE task). The rewrite happens under the run-info lock; if another process holds it right
 * now, the healed view is returned without writing (the holder's write wins, a later read heals).
 * A missing file yields the synthesised `unknown` record.
 */
export function readRunInfoReconciled(path: string, probe: LivenessProbe = createLivenessProbe()): RunInfo {
  return readRunInfoHealed(path, probe).info;
}

/**
 * readRunInfoReconciled, also saying whether the file holds exactly the record returned (nothing
 * to heal, or the heal was written) rather than a healed view or a synthesised one.
 */
export function readRunInfoHealed(path: string, probe: LivenessProbe = createLivenessProbe()): { info: RunInfo; stored: boolean } {
  const info = readRunInfoOrCorrupt(path);
  if (!info) return { info: synthesizeRunInfo(path), stored: false };
  if (info.status === 'corrupt') return { info, stored: false };
  const taskDir = taskDirOfRunInfo(path);
  const done = () => (taskDir ? hasDoneFile(taskDir) : false);
  const candidate = { ...info };
  if (!reconcileRunInfo(candidate, done(), probe)) return { info, stored: true };
  const written = rewriteUnderLock(path, probe, done);
  return written ? { info: written, stored: true } : { info: candidate, stored: false };
}

/**
 * A finished record that nothing rewrites once it has settled. The writers (the runner's finish,
 * `stop`, adoption, healing) change `running` records, with two exceptions: a runner recording
 * the real exit just after `stop` recorded the run, and healing, which turns a failed −1 record
 * into completed once the task has DONE (so that one is not final).
 */
export function isFinalRunInfo(info: RunInfo): boolean {
  return info.status === 'completed' || (info.status === 'failed' && info.exit_code !== STALE_EXIT_CODE);
}

function rewriteUnderLock(path: string, probe: LivenessProbe, done: () => boolean): RunInfo | undefined {
  const lockPath = `${path}.lock`;
  let fd: number;
  try {
    fd = openSync(lockPath, 'a+', 0o644);
  } catch {
    return undefined;
  }
  try {
    if (!tryFlock(fd, 'ex')) return undefined;
    if (!isLockOnPath(fd, lockPath)) {
      unflock(fd);
      return undefined;
    }
    try {
      const current = readRunInfo(path);
      if (reconcileRunInfo(current, done(), probe)) writeRunInfo(path, current);
      return current;
    } finally {
      rmSync(lockPath, { force: true });
      unflock(fd);
    }
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
