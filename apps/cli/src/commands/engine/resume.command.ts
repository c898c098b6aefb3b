import { Inject } from '@nestjs/common';
import { Command, Option } from 'nest-commander';
import { clearStopMarkers, existingTaskDir, removeDone, STORAGE_INDEX_FACTORY, type StorageIndexFactory } from '@app/storage';
import { RunnerService } from '@app/runner';
import { checkDir, loadRunConfig, promptFromFlags, resolveScope, runRoot } from './job-common';
import { runLoop } from './loop-run';
import { LoopFlagParsers, LoopFlags, loopSettings } from './task-options';
import { RESUME_MAX_RESTARTS } from './task-resume.command';

@Command({
  name: 'resume',
  description:
    'Reopen a task: delete its DONE marker and stop markers. With --agent, also run the Ralph loop again in resume ' +
    'mode ("Continue working on the following:" from the first attempt, default 3 restarts).',
})
export class ResumeCommand extends LoopFlagParsers {
  constructor(
    private readonly runner: RunnerService,
    @Inject(STORAGE_INDEX_FACTORY) private readonly indexFor: StorageIndexFactory,
  ) {
    super();
  }

  async run(_args: string[], flags: LoopFlags = {}): Promise<void> {
    await this.resume(flags);
  }

  private async resume(flags: LoopFlags): Promise<void> {
    const settings = loopSettings(flags, RESUME_MAX_RESTARTS);
    const prompt = promptFromFlags(flags);
    const cwd = checkDir(flags.cwd, 'working directory');
    const loaded = flags.agent ? loadRunConfig(flags.config) : {};
    const root = runRoot(flags.root, loaded);
    const scope = resolveScope(flags, root, { generate: false });
    const layout = this.indexFor(root).layout;
    const taskDir = existingTaskDir(layout, scope.projectId, scope.taskId);
    removeDone(taskDir);
    clearStopMarkers(taskDir);
    process.stdout.write(`Resumed task ${scope.taskId} (restart counter reset)\n`);
    if (!flags.agent) return;
    await runLoop({ runner: this.runner, layout, scope, flags, loaded, settings, cwd, prompt, resume: true });
  }

  @Option({ flags: '--prompt <text>', description: 'prompt for the resumed loop (default: TASK.md)' })
  parsePrompt(v: string): string {
    return v;
  }

  @Option({ flags: '--prompt-file <file>', description: 'read the prompt from this file' })
  parsePromptFile(v: string): string {
    return v;
  }
}
