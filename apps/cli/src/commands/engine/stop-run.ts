/**
 * `run-agent stop` (plain: no NestJS), run by StopCommand and by the Nest-free hot path
 * (apps/cli/src/fast) with the runner of their composition root.
 */
import { resolve } from 'node:path';
import { existingTaskDir, pathExists, runInfoFile, type StorageIndexFactory, validateRunId, writeStopRequested } from '@app/storage';
import { findRunningRun, type RunnerService, type StoppedRun } from '@app/runner';
import { UsageError } from '../../common/cli-errors';
import type { TextOut } from '@app/boot';
import type { StopFlags } from './stop-flags';
import { resolveScope } from './job-common';
import { durationFlag } from './support/options';
import { resolveRoot } from './support/runs-root';

/** What `stop` takes from its composition root. */
export interface StopSeams {
  runner: Pick<RunnerService, 'stopRun' | 'stopTask'>;
  /** The runs root's layout comes from its index (STORAGE_INDEX_FACTORY). */
  indexFor: StorageIndexFactory;
  /** Where the command prints: process.stdout, or fdStdout() on the hot path. */
  stdout: TextOut;
}

export async function runStop(flags: StopFlags, seams: StopSeams): Promise<void> {
  await stop(flags, seams);
}

async function stop(flags: StopFlags, seams: StopSeams): Promise<void> {
  const graceMs = flags.grace !== undefined ? durationFlag(flags.grace, '--grace') : undefined;
  const stoppedBy = `run-agent stop (pid ${process.pid})`;
  let runDir: string | undefined;
  if (flags.runDir) {
    runDir = resolve(flags.runDir);
    if (!pathExists(runDir)) throw new UsageError(`run directory not found: ${runDir}`);
  } else {
    const root = resolveRoot(flags.root, process.env, flags.config);
    const scope = resolveScope(flags, root, { generate: false });
    if (flags.run) validateRunId(flags.run);
    const taskDir = existingTaskDir(seams.indexFor(root).layout, scope.projectId, scope.taskId);
    const permanent = flags.noRestart === true || flags.restart === false;
    if (!flags.run) return stopTree(seams, taskDir, scope, { graceMs, stoppedBy, permanent });
    // the stop is acknowledged only once its marker is on disk: a failed write fails the stop
    // (one line, exit 1) before any run is signalled, as stopTask does for the whole task
    writeStopRequested(taskDir, permanent);
    runDir = findRunningRun(taskDir, flags.run);
    if (!runDir) throw new Error(`no running run ${flags.run} found for project ${scope.projectId} task ${scope.taskId}`);
  }
  if (!pathExists(runInfoFile(runDir))) {
    process.stderr.write(`run-info.yaml not found in ${runDir}; nothing to stop\n`);
    return;
  }
  const result = await seams.runner.stopRun(runDir, { graceMs, stoppedBy });
  if (!result.stopped) {
    process.stderr.write(`run ${result.runId} is not running (status: ${result.status})\n`);
    return;
  }
  printStopped(seams.stdout, [{ runId: result.runId!, pid: result.pid!, beforeStart: result.beforeStart }, ...(result.descendants ?? [])]);
}

/** The whole task: its loop (STOP-REQUESTED), every running run and their sub-agent runs (D6). */
async function stopTree(seams: StopSeams, taskDir: string, scope: { projectId: string; taskId: string }, opts: { graceMs?: number; stoppedBy: string; permanent: boolean }): Promise<void> {
  const { runs } = await seams.runner.stopTask(taskDir, opts);
  if (runs.length === 0) throw new Error(`no running runs found for project ${scope.projectId} task ${scope.taskId}`);
  printStopped(seams.stdout, runs);
}

function printStopped(out: TextOut, runs: StoppedRun[]): void {
  for (const r of runs) out.write(r.beforeStart ? `Stopped run ${r.runId} before its agent started\n` : `Stopped run ${r.runId} (PID ${r.pid})\n`);
}
