import { Inject } from '@nestjs/common';
import { Command, CommandRunner, Option } from 'nest-commander';
import { formatGoDuration, watchedTaskPaths, watchTaskStatus } from '@app/runner';
import { CHANGE_FEED, ChangeFeed, existingTaskDir, LIVENESS_PROBE, LivenessProbe, STORAGE_INDEX_FACTORY, type StorageIndexFactory, waitForChange } from '@app/storage';
import { UsageError } from '../../common/cli-errors';
import { collect, durationFlag } from './support/options';
import { resolveRoot } from './support/runs-root';
import { inferScope } from './support/scope';
import { createWatchView } from './progress/watch-view';

export { renderWatchPoll, watchPhase } from './progress/watch-view';

interface WatchOptions {
  root?: string;
  config?: string;
  project?: string;
  task?: string[];
  timeout?: string;
  json?: boolean;
  allowMissing?: boolean;
}


@Command({
  name: 'watch',
  description:
    'Watch tasks until all of them finish: the Ralph loop has ended (an attempt that ends while the loop restarts shows as restarting). ' +
    'Exit 1 when --timeout passes first, exit 2 for an unknown task.',
})
export class WatchCommand extends CommandRunner {
  constructor(
    @Inject(LIVENESS_PROBE) private readonly probe: LivenessProbe,
    @Inject(CHANGE_FEED) private readonly feed: ChangeFeed,
    @Inject(STORAGE_INDEX_FACTORY) private readonly indexFor: StorageIndexFactory,
  ) {
    super();
  }

  async run(_params: string[], options: WatchOptions = {}): Promise<void> {
    const timeoutMs = durationFlag(options.timeout ?? '30m', '--timeout');
    const root = resolveRoot(options.root, process.env, options.config);
    const scope = inferScope({ project: options.project, task: options.task?.[0] }, { root });
    if (!scope.project) throw new UsageError('--project is required (or run inside a task: JRUN_PROJECT_ID or a task working directory)');
    const project = scope.project;
    const tasks = options.task?.length ? options.task.map((t) => t.trim()) : scope.task ? [scope.task] : [];
    if (tasks.length === 0) throw new UsageError('at least one --task is required');
    const layout = this.indexFor(root).layout;
    tasks.forEach((t) => layout.taskDir(project, t)); // D18: refuse bad ids before reading anything
    // an unknown task is a typo (did-you-mean), not a task to wait 30 minutes for, unless asked
    if (!options.allowMissing) tasks.forEach((t) => existingTaskDir(layout, project, t));

    const { probe, feed } = this;
    const deadline = Date.now() + timeoutMs;
    // --json: one line per poll; otherwise a block redrawn in place on a terminal, or only the changes
    const view = options.json ? undefined : createWatchView(process.stdout);
    if (view) process.stdout.write(`Watching ${tasks.length} task(s) for project ${JSON.stringify(project)}:\n`);
    try {
      for (;;) {
        const statuses = tasks.map((t) => watchTaskStatus(layout, project, t, probe));
        const allDone = statuses.every((s) => s.done);
        const remaining = deadline - Date.now();
        if (view) view.update(statuses, allDone, remaining);
        else process.stdout.write(`${JSON.stringify({ tasks: statuses, all_done: allDone })}\n`);
        if (allDone) return;
        if (remaining <= 0) throw new Error(`timeout after ${formatGoDuration(timeoutMs)}: not all tasks completed`);
        await waitForChange(feed, tasks.flatMap((t) => watchedTaskPaths(layout.runsDir(project, t))), Math.min(view?.tickMs ?? 2000, remaining));
      }
    } finally {
      view?.finish();
    }
  }

  @Option({ flags: '--root <dir>', description: 'runs root (default: $CONDUCTOR_ROOT, $RUN_AGENT_ROOT, config storage.runs_dir, ~/.run-agent/runs)' })
  parseRoot(v: string): string {
    return v;
  }

  @Option({ flags: '--config <file>', description: 'config file (default: $CONDUCTOR_CONFIG, ./config.yaml, ./config.yml, ~/.run-agent/conductor-loop.hcl)' })
  parseConfig(v: string): string {
    return v;
  }

  @Option({ flags: '--project <id>', description: 'project id (default: inferred from JRUN_* variables or the working directory)' })
  parseProject(v: string): string {
    return v;
  }

  @Option({ flags: '--task <id>', description: 'task id to watch; repeat for several tasks (default: the current task)' })
  parseTask(v: string, previous?: string[]): string[] {
    return collect(v, previous);
  }

  @Option({ flags: '--timeout <duration>', description: 'give up after this long and exit 1 (Go duration, default 30m)' })
  parseTimeout(v: string): string {
    return v;
  }

  @Option({ flags: '--allow-missing', description: 'wait for tasks whose folder does not exist yet (shown as pending) instead of refusing an unknown task with exit 2' })
  parseAllowMissing(): boolean {
    return true;
  }

  @Option({ flags: '--json', description: 'print one JSON line per poll: {"tasks":[{task_id,status,elapsed,done}],"all_done":bool}' })
  parseJson(): boolean {
    return true;
  }
}
