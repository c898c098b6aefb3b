import { Inject } from '@nestjs/common';
import { Command, Option } from 'nest-commander';
import { MessageBusService } from '@app/messagebus';
import { mergeTask, taskDiff } from '@app/worktree';
import { existingTaskDir, STORAGE_INDEX_FACTORY, type StorageIndexFactory } from '@app/storage';
import { loadRunConfig, resolveScope, runRoot } from './job-common';
import { durationFlag } from './support/options';
import { resolveRoot } from './support/runs-root';
import { TaskScopeParsers } from './task-options';

interface ScopeFlags {
  root?: string;
  config?: string;
  project?: string;
  task?: string;
}

/** The task folder in the runs root every command resolves (--root, …, the --config file's storage.runs_dir). */
function taskDirOf(indexFor: StorageIndexFactory, flags: ScopeFlags, root = resolveRoot(flags.root, process.env, flags.config)): string {
  const scope = resolveScope(flags, root, { generate: false });
  return existingTaskDir(indexFor(root).layout, scope.projectId, scope.taskId);
}

@Command({
  name: 'diff',
  description:
    "Show a worktree task's changes against its base commit: its branch's commits plus what is not yet committed " +
    '(untracked files included). Text is a unified diff; --stat lists files; --json gives files with hunks.',
})
export class DiffCommand extends TaskScopeParsers {
  constructor(@Inject(STORAGE_INDEX_FACTORY) private readonly indexFor: StorageIndexFactory) {
    super();
  }

  async run(_args: string[], flags: ScopeFlags & { stat?: boolean; json?: boolean } = {}): Promise<void> {
    const diff = await taskDiff(taskDirOf(this.indexFor, flags));
    if (flags.json) {
      process.stdout.write(`${JSON.stringify(diff, null, 2)}\n`);
    } else if (flags.stat) {
      for (const f of diff.files) process.stdout.write(`${f.status}\t+${f.additions}\t-${f.deletions}\t${f.path}\n`);
      process.stdout.write(`${diff.files.length} file(s) changed against ${diff.base_commit.slice(0, 12)} (${diff.branch})\n`);
    } else {
      process.stdout.write(diff.patch ? `${diff.patch}\n` : '');
    }
  }

  @Option({ flags: '--stat', description: 'one line per file: status, additions, deletions, path' })
  parseStat(): boolean {
    return true;
  }

  @Option({ flags: '--json', description: 'print {task_id, branch, base_commit, worktree, files: [{path, status, additions, deletions, hunks}], patch}' })
  parseJson(): boolean {
    return true;
  }
}

@Command({
  name: 'merge',
  description:
    "Merge a finished worktree task's branch into its base branch through the repository's durable merge queue " +
    '(<repo>/.conductor/merge-queue.yaml: one merge at a time per repository, in order; a merge interrupted by a crash ' +
    'is re-verified and recorded by the next merge or server start). Uncommitted changes are committed first; config ' +
    'worktree.verify runs on the result in a process group that dies with this process. ' +
    'A conflict or a failing verify leaves the base branch unchanged, posts MERGE_CONFLICT/MERGE_FAILED on the task ' +
    'bus naming the files, and exits 1.',
})
export class MergeCommand extends TaskScopeParsers {
  constructor(
    @Inject(STORAGE_INDEX_FACTORY) private readonly indexFor: StorageIndexFactory,
    private readonly bus: MessageBusService,
  ) {
    super();
  }

  async run(_args: string[], flags: ScopeFlags & { config?: string; queueTimeout?: string } = {}): Promise<void> {
    const queueTimeoutMs = flags.queueTimeout !== undefined ? durationFlag(flags.queueTimeout, '--queue-timeout') : undefined;
    const loaded = loadRunConfig(flags.config);
    const taskDir = taskDirOf(this.indexFor, flags, runRoot(flags.root, loaded));
    const r = await mergeTask({ taskDir, config: loaded.config, queueTimeoutMs, writers: this.bus.writers });
    if (r.already_merged) process.stdout.write(`${r.branch} is already merged into ${r.base_branch}\n`);
    else if (!r.commit) process.stdout.write(`${r.branch} has nothing to merge into ${r.base_branch}\n`);
    else process.stdout.write(`merged ${r.branch} into ${r.base_branch} (${r.commit})\n`);
  }

  @Option({ flags: '--config <file>', description: 'config file with worktree.verify (default: $CONDUCTOR_CONFIG, ./config.yaml, ./config.yml, ~/.run-agent/conductor-loop.hcl)' })
  override parseConfig(v: string): string {
    return v;
  }

  @Option({ flags: '--queue-timeout <duration>', description: 'how long to wait for earlier merges of the same repository (default 30m); a merge still queued then is withdrawn' })
  parseQueueTimeout(v: string): string {
    return v;
  }
}
