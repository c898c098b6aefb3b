import { Inject } from '@nestjs/common';
import { existsSync } from 'node:fs';
import { Command, CommandRunner, Option } from 'nest-commander';
import { formatGoDuration } from '@app/runner';
import { blockedBy, CHANGE_FEED, ChangeFeed, isTaskDone, LIVENESS_PROBE, LivenessProbe, readDependsOn, readRunInfoReconciled, runInfoIn, RunsLayout, runState, type RunInfo, taskRunsDir } from '@app/storage';
import { UsageError } from '../../common/cli-errors';
import { collect, durationFlag } from './support/options';
import { resolveRoot } from './support/runs-root';
import { inferScope } from './support/scope';
import { listRunNames } from './support/task-state';
import { waitForChange } from './support/wake';
import { createWatchView, type WatchTaskStatus } from './progress/watch-view';

export { renderWatchPoll, watchPhase, type WatchTaskStatus } from './progress/watch-view';

interface WatchOptions {
  root?: string;
  config?: string;
  project?: string;
  task?: string[];
  timeout?: string;
  json?: boolean;
}

const ZERO_TIME_MS = Date.UTC(1, 0, 1);

function latestReadableRunInfo(runsDir: string, runs: string[], probe: LivenessProbe): RunInfo | undefined {
  for (let i = runs.length - 1; i >= 0; i--) {
    const path = runInfoIn(runsDir, runs[i]);
    if (!existsSync(path)) continue;
    try {
      return readRunInfoReconciled(path, probe);
    } catch {
      // unreadable: try an older run
    }
  }
  return undefined;
}

export function watchTaskStatus(layout: RunsLayout, project: string, task: string, probe: LivenessProbe, now = new Date()): WatchTaskStatus {
  const result: WatchTaskStatus = { task_id: task, status: 'unknown', elapsed: 0, done: false };
  const taskDir = layout.taskDir(project, task);
  const runsDir = taskRunsDir(taskDir);
  const runs = listRunNames(runsDir) ?? [];
  const info = runs.length ? latestReadableRunInfo(runsDir, runs, probe) : undefined;
  if (!info) {
    if (isTaskDone(taskDir)) return { ...result, status: 'done', done: true, elapsed: -1 };
    if (runs.length === 0) {
      const deps = readDependsOn(taskDir);
      if (deps.length && blockedBy(layout.root, project, deps).length) result.status = 'blocked';
    }
    return result;
  }
  result.status = runState(info, taskDir);
  const start = info.start_time?.getTime() ?? ZERO_TIME_MS;
  if (start > ZERO_TIME_MS) {
    const end = info.end_time?.getTime() ?? ZERO_TIME_MS;
    const finished = info.status === 'completed' || info.status === 'failed';
    result.elapsed = Math.max(0, (finished && end > ZERO_TIME_MS ? end : now.getTime()) - start) / 1000;
  } else {
    result.elapsed = -1;
  }
  result.done = ['completed', 'failed', 'done'].includes(info.status);
  return result;
}

/** The runs folder (new runs) and the newest run-info.yaml (status changes) of a task. */
function watchedPaths(runsDir: string): string[] {
  const runs = listRunNames(runsDir) ?? [];
  return runs.length ? [runsDir, runInfoIn(runsDir, runs[runs.length - 1])] : [runsDir];
}

@Command({
  name: 'watch',
  description: 'Watch tasks until all of them finish (exit 1 when --timeout passes first)',
})
export class WatchCommand extends CommandRunner {
  constructor(
    @Inject(LIVENESS_PROBE) private readonly probe: LivenessProbe,
    @Inject(CHANGE_FEED) private readonly feed: ChangeFeed,
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
    const layout = new RunsLayout(root);
    tasks.forEach((t) => layout.taskDir(project, t)); // D18: refuse bad ids before reading anything

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
        await waitForChange(feed, tasks.flatMap((t) => watchedPaths(layout.runsDir(project, t))), Math.min(view?.tickMs ?? 2000, remaining));
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

  @Option({ flags: '--json', description: 'print one JSON line per poll: {"tasks":[{task_id,status,elapsed,done}],"all_done":bool}' })
  parseJson(): boolean {
    return true;
  }
}
