import { Command, Option } from 'nest-commander';
import { DEFAULT_RESTART_DELAY_MS, RunnerService, TaskResult } from '@app/runner';
import { RunsLayout } from '@app/storage';
import { collect } from './support/options';
import { agentCallerEnv, asCliError, checkDir, loadRunConfig, promptFromFlags, resolveScope, runRoot } from './job-common';
import { startTaskProgress } from './progress/task-progress';
import { isolationFromFlags, LoopFlagParsers, LoopFlags, loopSettings } from './task-options';
import { TaskCancelCommand } from './task-cancel.command';
import { TaskDeleteCommand } from './task-delete.command';
import { TaskResumeCommand } from './task-resume.command';

export function throwIfNotDone(result: TaskResult): void {
  if (result.status !== 'done') throw new Error(result.error ?? `task ${result.status}`);
}

@Command({
  name: 'task',
  subCommands: [TaskResumeCommand, TaskDeleteCommand, TaskCancelCommand],
  description:
    'Run a task under the Ralph loop: run the agent, restart it until <task>/DONE exists (or the restart budget ' +
    'is spent), wait for child runs, then post the completion FACT to the project bus. Fatal errors (missing ' +
    'binary, unknown agent, bad config) end the task at once. Ctrl-C stops the agent process group.',
})
export class TaskCommand extends LoopFlagParsers {
  constructor(private readonly runner: RunnerService) {
    super();
  }

  async run(_args: string[], flags: LoopFlags = {}): Promise<void> {
    try {
      await this.runTask(flags);
    } catch (err) {
      throw asCliError(err);
    }
  }

  private async runTask(flags: LoopFlags): Promise<void> {
    const settings = loopSettings(flags);
    const prompt = promptFromFlags(flags);
    const cwd = checkDir(flags.cwd, 'working directory');
    const loaded = loadRunConfig(flags.config);
    const root = runRoot(flags.root, loaded);
    const scope = resolveScope(flags, root, { generate: true, inferTask: false });
    // A start that cannot succeed leaves no task folder behind: the start-a-task use case's checks
    // (the loop seeds the task's files itself, under its lock).
    const layout = new RunsLayout(root);
    const { taskDir } = await this.runner.checkStartTask({ layout, config: loaded.config, projectId: scope.projectId, taskId: scope.taskId, prompt, agent: flags.agent, env: agentCallerEnv(loaded), cwd, dependsOn: flags.dependsOn });
    if (scope.generated) process.stderr.write(`task: ${scope.taskId}\n`);
    const progress = startTaskProgress({
      busPath: layout.taskBus(scope.projectId, scope.taskId),
      taskDir,
      taskId: scope.taskId,
      restartDelayMs: settings.restartDelayMs ?? DEFAULT_RESTART_DELAY_MS,
      stream: process.stderr,
    });
    const result = await this.runner.runTask({
      root,
      projectId: scope.projectId,
      taskId: scope.taskId,
      prompt,
      config: loaded.config,
      agent: flags.agent,
      cwd,
      dependsOn: flags.dependsOn,
      isolation: isolationFromFlags(flags),
      conductorUrl: flags.conductorUrl,
      env: agentCallerEnv(loaded),
      ...settings,
    }).finally(() => progress.stop());
    throwIfNotDone(result);
  }

  @Option({ flags: '--prompt <text>', description: 'task prompt; written to TASK.md when the task is new (default: TASK.md)' })
  parsePrompt(v: string): string {
    return v;
  }

  @Option({ flags: '--prompt-file <file>', description: 'read the prompt from this file (wins over --prompt)' })
  parsePromptFile(v: string): string {
    return v;
  }

  @Option({ flags: '--depends-on <task-ids>', description: 'tasks that must be DONE first (repeatable or comma-separated; replaces TASK-CONFIG.yaml; "" clears)' })
  parseDependsOn(v: string, prev?: string[]): string[] {
    return collect(v, prev);
  }

  @Option({ flags: '--dependency-poll-interval <duration>', description: 'how often to re-check dependencies (default 2s)' })
  parseDependencyPollInterval(v: string): string {
    return v;
  }

  @Option({ flags: '--conductor-url <url>', description: 'conductor server URL given to the agent as JRUN_CONDUCTOR_URL' })
  parseConductorUrl(v: string): string {
    return v;
  }

  @Option({ flags: '--timeout <duration>', description: 'per attempt: kill the agent after this long without output (default: none)' })
  parseTimeout(v: string): string {
    return v;
  }
}
