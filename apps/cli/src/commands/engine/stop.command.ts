import { resolve } from 'node:path';
import { Command, Option } from 'nest-commander';
import { TaskScopeParsers } from './task-options';
import { existingTaskDir, pathExists, runInfoFile, RunsLayout, validateRunId, writeStopRequested } from '@app/storage';
import { findRunningRun, RunnerService, type StoppedRun } from '@app/runner';
import { UsageError } from '../../common/cli-errors';
import { asCliError, resolveScope } from './job-common';
import { durationFlag } from './support/options';
import { resolveRoot } from './support/runs-root';

interface StopFlags {
  config?: string;
  runDir?: string;
  root?: string;
  project?: string;
  task?: string;
  run?: string;
  force?: boolean;
  noRestart?: boolean;
  restart?: boolean;
  grace?: string;
}

@Command({
  name: 'stop',
  description:
    'Stop a task or a run: SIGTERM to the process groups of its runs, their sub-agent runs and any process of their ' +
    'trees that left the group; SIGKILL after the grace period. --project/--task (from JRUN_* or the working ' +
    'directory) stops the whole task: its Ralph loop does not restart, every running run of it and every sub-agent ' +
    'run started from them is stopped. --run (within the task) or --run-dir stops that run and its sub-agent runs.',
})
export class StopCommand extends TaskScopeParsers {
  constructor(private readonly runner: RunnerService) {
    super();
  }

  async run(_args: string[], flags: StopFlags = {}): Promise<void> {
    try {
      await this.stop(flags);
    } catch (err) {
      throw asCliError(err);
    }
  }

  private async stop(flags: StopFlags): Promise<void> {
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
      const taskDir = existingTaskDir(new RunsLayout(root), scope.projectId, scope.taskId);
      const permanent = flags.noRestart === true || flags.restart === false;
      if (!flags.run) return this.stopTree(taskDir, scope, { graceMs, stoppedBy, permanent });
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
    const result = await this.runner.stopRun(runDir, { graceMs, stoppedBy });
    if (!result.stopped) {
      process.stderr.write(`run ${result.runId} is not running (status: ${result.status})\n`);
      return;
    }
    printStopped([{ runId: result.runId!, pid: result.pid!, beforeStart: result.beforeStart }, ...(result.descendants ?? [])]);
  }

  /** The whole task: its loop (STOP-REQUESTED), every running run and their sub-agent runs (D6). */
  private async stopTree(taskDir: string, scope: { projectId: string; taskId: string }, opts: { graceMs?: number; stoppedBy: string; permanent: boolean }): Promise<void> {
    const { runs } = await this.runner.stopTask(taskDir, opts);
    if (runs.length === 0) throw new Error(`no running runs found for project ${scope.projectId} task ${scope.taskId}`);
    printStopped(runs);
  }

  @Option({ flags: '--run-dir <dir>', description: 'run folder to stop' })
  parseRunDir(v: string): string {
    return v;
  }

  @Option({ flags: '--run <id>', description: 'stop only this run of the task (and its sub-agent runs); default: the whole task' })
  parseRun(v: string): string {
    return v;
  }

  @Option({ flags: '--grace <duration>', description: 'wait this long after SIGTERM before SIGKILL (default 30s)' })
  parseGrace(v: string): string {
    return v;
  }

  @Option({ flags: '--force', description: 'accepted for compatibility: SIGKILL always follows the grace period' })
  parseForce(): boolean {
    return true;
  }

  @Option({ flags: '--no-restart', description: 'write a permanent STOP-REQUESTED marker (monitor never restarts the task)' })
  parseNoRestart(): boolean {
    return false;
  }
}

function printStopped(runs: StoppedRun[]): void {
  for (const r of runs) process.stdout.write(r.beforeStart ? `Stopped run ${r.runId} before its agent started\n` : `Stopped run ${r.runId} (PID ${r.pid})\n`);
}
