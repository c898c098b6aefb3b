import { Inject } from '@nestjs/common';
import { Command, Option } from 'nest-commander';
import { RunnerService } from '@app/runner';
import { STORAGE_INDEX_FACTORY, type StorageIndexFactory } from '@app/storage';
import { collect } from './support/options';
import { LoopFlagParsers } from './task-options';
import { TASK_FLAGS, type TaskFlags } from './task-flags';
import { runTaskCommand } from './task-run';
import { TaskCancelCommand } from './task-cancel.command';
import { TaskDeleteCommand } from './task-delete.command';
import { TaskResumeCommand } from './task-resume.command';

export { throwIfNotDone } from './task-run';

// `task` normally runs on the Nest-free hot path (apps/cli/src/fast); this class serves `--help`,
// usage errors, its subcommands and the Nest composition root (test/e2e/di).
@Command({
  name: 'task',
  subCommands: [TaskResumeCommand, TaskDeleteCommand, TaskCancelCommand],
  description:
    'Run a task under the Ralph loop: run the agent, restart it until <task>/DONE exists (or the restart budget ' +
    'is spent), wait for child runs, then post the completion FACT to the project bus. Fatal errors (missing ' +
    'binary, unknown agent, bad config) end the task at once. Ctrl-C stops the agent process group. ' +
    'With RUN_AGENT_SUPERVISOR=1 the loop runs in one of the host\'s shared task supervisors (one process per ' +
    'core, RUN_AGENT_SUPERVISOR_SHARDS, for many tasks; docs/operations.md) and this command stays in the foreground as its client.',
})
export class TaskCommand extends LoopFlagParsers {
  constructor(
    private readonly runner: RunnerService,
    @Inject(STORAGE_INDEX_FACTORY) private readonly indexFor: StorageIndexFactory,
  ) {
    super();
  }

  async run(_args: string[], flags: TaskFlags = {}): Promise<void> {
    await runTaskCommand(flags, { runner: this.runner, indexFor: this.indexFor });
  }

  @Option(TASK_FLAGS.prompt) parsePrompt(v: string): string { return v; }
  @Option(TASK_FLAGS.promptFile) parsePromptFile(v: string): string { return v; }
  @Option(TASK_FLAGS.dependsOn) parseDependsOn(v: string, prev?: string[]): string[] { return collect(v, prev); }
  @Option(TASK_FLAGS.dependencyPollInterval) parseDependencyPollInterval(v: string): string { return v; }
  @Option(TASK_FLAGS.conductorUrl) parseConductorUrl(v: string): string { return v; }
  @Option(TASK_FLAGS.timeout) parseTimeout(v: string): string { return v; }
}
