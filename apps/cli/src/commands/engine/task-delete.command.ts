import { Inject } from '@nestjs/common';
import { Option, SubCommand } from 'nest-commander';
import { TaskScopeParsers } from './task-options';
import { STORAGE_INDEX_FACTORY, type StorageIndexFactory } from '@app/storage';
import { deleteTaskFolder, RunnerService } from '@app/runner';
import { resolveScope, withParentOptions } from './job-common';
import { resolveRoot } from './support/runs-root';

interface DeleteFlags {
  config?: string;
  root?: string;
  project?: string;
  task?: string;
  force?: boolean;
}

@SubCommand({
  name: 'delete',
  description: 'Delete a task folder with all its runs. Refuses while a run is running unless --force, which stops the runs first.',
})
export class TaskDeleteCommand extends TaskScopeParsers {
  constructor(
    private readonly runner: RunnerService,
    @Inject(STORAGE_INDEX_FACTORY) private readonly indexFor: StorageIndexFactory,
  ) {
    super();
  }

  async run(_args: string[], options: DeleteFlags = {}): Promise<void> {
    const flags = withParentOptions(this.command, options);
    const root = resolveRoot(flags.root, process.env, flags.config);
    const scope = resolveScope(flags, root, { generate: false });
    const taskDir = this.indexFor(root).layout.taskDir(scope.projectId, scope.taskId);
    await deleteTaskFolder(taskDir, {
      force: flags.force,
      stopTask: (dir) => this.runner.stopTask(dir, { stoppedBy: `run-agent task delete --force (pid ${process.pid})` }),
    });
    process.stdout.write(`Deleted task: ${scope.taskId}\n`);
  }

  @Option({ flags: '--force', description: 'stop running runs, then delete' })
  parseForce(): boolean {
    return true;
  }
}
