import { Inject } from '@nestjs/common';
import { join } from 'node:path';
import { SubCommand } from 'nest-commander';
import { clearStopMarkers, existingTaskDir, pathExists, STORAGE_INDEX_FACTORY, type StorageIndexFactory, TASK_PROMPT_FILE } from '@app/storage';
import { RunnerService } from '@app/runner';
import { UsageError } from '../../common/cli-errors';
import { checkDir, loadRunConfig, resolveScope, runRoot, withParentOptions } from './job-common';
import { runLoop } from './loop-run';
import { LoopFlagParsers, LoopFlags, loopSettings } from './task-options';

export const RESUME_MAX_RESTARTS = 3;

@SubCommand({
  name: 'resume',
  description:
    'Resume an existing task from its TASK.md with the "Continue working on the following:" prefix from the first ' +
    'attempt (default 3 restarts). DONE is kept: a finished task only re-checks its children.',
})
export class TaskResumeCommand extends LoopFlagParsers {
  constructor(
    private readonly runner: RunnerService,
    @Inject(STORAGE_INDEX_FACTORY) private readonly indexFor: StorageIndexFactory,
  ) {
    super();
  }

  async run(_args: string[], options: LoopFlags = {}): Promise<void> {
    const flags = withParentOptions(this.command, options);
    await this.resume(flags);
  }

  private async resume(flags: LoopFlags): Promise<void> {
    const settings = loopSettings(flags, RESUME_MAX_RESTARTS);
    const cwd = checkDir(flags.cwd, 'working directory');
    const loaded = loadRunConfig(flags.config);
    const root = runRoot(flags.root, loaded);
    const scope = resolveScope(flags, root, { generate: false });
    const layout = this.indexFor(root).layout;
    const taskDir = existingTaskDir(layout, scope.projectId, scope.taskId);
    // a start cut before TASK.md was written leaves the folder of a task that never started: bad input, like an unknown task
    if (!pathExists(join(taskDir, TASK_PROMPT_FILE))) throw new UsageError(`task ${scope.taskId} never started: TASK.md not found in task directory ${taskDir}; start it with \`run-agent task\``);
    process.stderr.write(`Resuming task: ${scope.taskId}\n`);
    clearStopMarkers(taskDir);
    await runLoop({ runner: this.runner, layout, scope, flags, loaded, settings, cwd, resume: true });
  }
}
