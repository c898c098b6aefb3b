import { resolve } from 'node:path';
import { Command, Option } from 'nest-commander';
import { TaskScopeParsers } from './task-options';
import { existingTaskDir, pathExists, runInfoFile, RunsLayout, validateRunId, writeStopRequested } from '@app/storage';
import { findRunningRun, RunnerService } from '@app/runner';
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
    'Stop a run: SIGTERM to its process group, its child runs and any process of its tree that left the group; ' +
    'SIGKILL after the grace period. The task\'s Ralph loop does not restart a stopped run. ' +
    'Target: --run-dir, or --project/--task (from JRUN_* or the working directory) with an optional --run.',
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
    let runDir: string | undefined;
    if (flags.runDir) {
      runDir = resolve(flags.runDir);
      if (!pathExists(runDir)) throw new UsageError(`run directory not found: ${runDir}`);
    } else {
      const root = resolveRoot(flags.root, process.env, flags.config);
      const scope = resolveScope(flags, root, { generate: false });
      if (flags.run) validateRunId(flags.run);
      const taskDir = existingTaskDir(new RunsLayout(root), scope.projectId, scope.taskId);
      try {
        writeStopRequested(taskDir, flags.noRestart === true || flags.restart === false);
      } catch (err) {
        process.stderr.write(`warning: ${(err as Error).message}\n`);
      }
      runDir = findRunningRun(taskDir, flags.run);
      if (!runDir) {
        throw new Error(
          flags.run
            ? `no running run ${flags.run} found for project ${scope.projectId} task ${scope.taskId}`
            : `no running runs found for project ${scope.projectId} task ${scope.taskId}`,
        );
      }
    }
    if (!pathExists(runInfoFile(runDir))) {
      process.stderr.write(`run-info.yaml not found in ${runDir}; nothing to stop\n`);
      return;
    }
    const result = await this.runner.stopRun(runDir, { graceMs, stoppedBy: `run-agent stop (pid ${process.pid})` });
    if (!result.stopped) {
      process.stderr.write(`run ${result.runId} is not running (status: ${result.status})\n`);
      return;
    }
    if (result.beforeStart) process.stdout.write(`Stopped run ${result.runId} before its agent started\n`);
    else process.stdout.write(`Stopped run ${result.runId} (PID ${result.pid})\n`);
  }

  @Option({ flags: '--run-dir <dir>', description: 'run folder to stop' })
  parseRunDir(v: string): string {
    return v;
  }

  @Option({ flags: '--run <id>', description: 'run id within the task (default: the newest running run)' })
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
