import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Option, SubCommand } from 'nest-commander';
import { TaskScopeParsers } from './task-options';
import { readRunInfo, runInfoIn, RunsLayout } from '@app/storage';
import { RunnerService } from '@app/runner';
import { asCliError, resolveScope, withParentOptions } from './job-common';
import { resolveRoot } from './support/runs-root';

interface DeleteFlags {
  config?: string;
  root?: string;
  project?: string;
  task?: string;
  force?: boolean;
}

function runningRun(taskDir: string): string | undefined {
  const runsDir = join(taskDir, 'runs');
  if (!existsSync(runsDir)) return undefined;
  for (const run of readdirSync(runsDir).sort()) {
    try {
      if (readRunInfo(runInfoIn(runsDir, run)).status === 'running') return run;
    } catch {
      // no readable run-info: not running
    }
  }
  return undefined;
}

@SubCommand({
  name: 'delete',
  description: 'Delete a task folder with all its runs. Refuses while a run is running unless --force, which stops the runs first.',
})
export class TaskDeleteCommand extends TaskScopeParsers {
  constructor(private readonly runner: RunnerService) {
    super();
  }

  async run(_args: string[], options: DeleteFlags = {}): Promise<void> {
    const flags = withParentOptions(this.command, options);
    try {
      const root = resolveRoot(flags.root, process.env, flags.config);
      const scope = resolveScope(flags, root, { generate: false });
      const taskDir = new RunsLayout(root).taskDir(scope.projectId, scope.taskId);
      if (!existsSync(taskDir)) throw new Error(`task not found: ${scope.projectId}/${scope.taskId}`);
      const running = runningRun(taskDir);
      if (running && !flags.force) {
        throw new Error(`task ${scope.taskId} has a running run (${running}); use --force to delete anyway`);
      }
      if (running) await this.runner.stopTask(taskDir, { stoppedBy: `run-agent task delete --force (pid ${process.pid})` });
      rmSync(taskDir, { recursive: true, force: true });
      process.stdout.write(`Deleted task: ${scope.taskId}\n`);
    } catch (err) {
      throw asCliError(err);
    }
  }

  @Option({ flags: '--force', description: 'stop running runs, then delete' })
  parseForce(): boolean {
    return true;
  }
}
