import { Inject } from '@nestjs/common';
import { Command, Option } from 'nest-commander';
import { RunnerService } from '@app/runner';
import { STORAGE_INDEX_FACTORY, type StorageIndexFactory } from '@app/storage';
import { TaskScopeParsers } from './task-options';
import { STOP_FLAGS, type StopFlags } from './stop-flags';
import { runStop } from './stop-run';

// `stop` normally runs on the Nest-free hot path (apps/cli/src/fast); this class serves `--help`,
// usage errors and the Nest composition root.
@Command({
  name: 'stop',
  description:
    'Stop a task or a run: SIGTERM to the process groups of its runs, their sub-agent runs and any process of their ' +
    'trees that left the group; SIGKILL after the grace period. --project/--task (from JRUN_* or the working ' +
    'directory) stops the whole task: its Ralph loop does not restart, every running run of it and every sub-agent ' +
    'run started from them is stopped. --run (within the task) or --run-dir stops that run and its sub-agent runs.',
})
export class StopCommand extends TaskScopeParsers {
  constructor(
    private readonly runner: RunnerService,
    @Inject(STORAGE_INDEX_FACTORY) private readonly indexFor: StorageIndexFactory,
  ) {
    super();
  }

  async run(_args: string[], flags: StopFlags = {}): Promise<void> {
    await runStop(flags, { runner: this.runner, indexFor: this.indexFor, stdout: process.stdout });
  }

  @Option(STOP_FLAGS.runDir) parseRunDir(v: string): string { return v; }
  @Option(STOP_FLAGS.run) parseRun(v: string): string { return v; }
  @Option(STOP_FLAGS.grace) parseGrace(v: string): string { return v; }
  @Option(STOP_FLAGS.force) parseForce(): boolean { return true; }
  @Option(STOP_FLAGS.noRestart) parseNoRestart(): boolean { return false; }
}

