import { Inject } from '@nestjs/common';
import { Option, SubCommand } from 'nest-commander';
import { TaskScopeParsers } from './task-options';
import { existingTaskDir, STORAGE_INDEX_FACTORY, type StorageIndexFactory, writeCancelled } from '@app/storage';
import { RunnerService } from '@app/runner';
import { UsageError } from '../../common/cli-errors';
import { resolveScope, withParentOptions } from './job-common';
import { durationFlag } from './support/options';
import { resolveRoot } from './support/runs-root';

interface CancelFlags {
  config?: string;
  root?: string;
  project?: string;
  task?: string;
  reason?: string;
  grace?: string;
}

@SubCommand({
  name: 'cancel',
  description:
    'Cancel a task: write <task>/CANCELLED with the reason, end its Ralph loop and stop its running agents ' +
    '(SIGTERM to each process group, SIGKILL after the grace period). `run-agent resume` clears the marker.',
})
export class TaskCancelCommand extends TaskScopeParsers {
  constructor(
    private readonly runner: RunnerService,
    @Inject(STORAGE_INDEX_FACTORY) private readonly indexFor: StorageIndexFactory,
  ) {
    super();
  }

  async run(_args: string[], options: CancelFlags = {}): Promise<void> {
    const flags = withParentOptions(this.command, options);
    const reason = flags.reason?.trim();
    if (!reason) throw new UsageError('--reason is required');
    const graceMs = flags.grace !== undefined ? durationFlag(flags.grace, '--grace') : undefined;
    const root = resolveRoot(flags.root, process.env, flags.config);
    const scope = resolveScope(flags, root, { generate: false });
    const taskDir = existingTaskDir(this.indexFor(root).layout, scope.projectId, scope.taskId);
    writeCancelled(taskDir, reason);
    const { stoppedRuns } = await this.runner.stopTask(taskDir, { graceMs, stoppedBy: `run-agent task cancel (pid ${process.pid})` });
    process.stdout.write(`task ${scope.projectId}/${scope.taskId} marked as cancelled\nreason: ${reason}\n`);
    if (stoppedRuns > 0) process.stdout.write(`stopped runs: ${stoppedRuns}\n`);
  }

  @Option({ flags: '--reason <text>', description: 'why the task is cancelled (required)' })
  parseReason(v: string): string {
    return v;
  }

  @Option({ flags: '--grace <duration>', description: 'wait this long after SIGTERM before SIGKILL (default 30s)' })
  parseGrace(v: string): string {
    return v;
  }
}
