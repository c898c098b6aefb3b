import { Inject } from '@nestjs/common';
import { Command, CommandRunner, Option } from 'nest-commander';
import { formatGoDuration, watchedTaskPaths, watchTaskStatus, type WatchTaskStatus } from '@app/runner';
import { CHANGE_FEED, ChangeFeed, LIVENESS_PROBE, LivenessProbe, RunsLayout, waitForChange } from '@app/storage';
import { UsageError } from '../../common/cli-errors';
import { collect, durationFlag } from './support/options';
import { resolveRoot } from './support/runs-root';
import { inferScope } from './support/scope';

interface WatchOptions {
  root?: string;
  config?: string;
  project?: string;
  task?: string[];
  timeout?: string;
  json?: boolean;
}

const POLL_MS = 2000;

export function watchPhase(status: string): 'active' | 'blocked' | 'completed' | 'failed' | 'stopped' | 'pending' {
  switch (status) {
    case 'running':
      return 'active';
    case 'blocked':
      return 'blocked';
    case 'completed':
    case 'done':
      return 'completed';
    case 'failed':
      return 'failed';
    case 'stopped':
    case 'cancelled':
      return 'stopped';
    default:
      return 'pending';
  }
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
    const previous = new Map<string, string>();
    if (!options.json) process.stdout.write(`Watching ${tasks.length} task(s) for project ${JSON.stringify(project)}:\n`);

    for (;;) {
      const statuses = tasks.map((t) => watchTaskStatus(layout, project, t, probe));
      const allDone = statuses.every((s) => s.done);
      const remaining = deadline - Date.now();
      if (options.json) {
        process.stdout.write(`${JSON.stringify({ tasks: statuses, all_done: allDone })}\n`);
      } else {
        process.stdout.write(renderWatchPoll(statuses, previous, allDone, remaining));
      }
      if (allDone) return;
      if (remaining <= 0) throw new Error(`timeout after ${formatGoDuration(timeoutMs)}: not all tasks completed`);
      await waitForChange(feed, tasks.flatMap((t) => watchedTaskPaths(layout.runsDir(project, t))), Math.min(POLL_MS, remaining));
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

export function renderWatchPoll(statuses: WatchTaskStatus[], previous: Map<string, string>, allDone: boolean, remainingMs: number): string {
  const counts = { active: 0, blocked: 0, completed: 0, failed: 0, stopped: 0, pending: 0 };
  statuses.forEach((s) => counts[watchPhase(s.status)]++);
  let out = `  phase counts: active=${counts.active} blocked=${counts.blocked} completed=${counts.completed} failed=${counts.failed} stopped=${counts.stopped} pending=${counts.pending}\n`;
  for (const s of statuses) {
    const phase = watchPhase(s.status);
    const label = s.done ? 'duration' : 'elapsed';
    // Go duration text of the real run time (sub-second runs too); "-" when no run time is known.
    const time = s.elapsed < 0 ? '-' : formatGoDuration(Math.round(s.elapsed * 1000));
    out += `  ${s.task_id.padEnd(45)} [${s.status.padEnd(9)}] ${phase.padEnd(9)} ${label}: ${time}\n`;
    // A transition is a change seen by this watch; the first poll only shows the state.
    const before = previous.get(s.task_id);
    if (before !== undefined && before !== phase) out += `    transition: ${before} -> ${phase}\n`;
    previous.set(s.task_id, phase);
  }
  if (allDone) return `${out}All tasks complete.\n`;
  const remaining = formatGoDuration(Math.max(0, Math.round(remainingMs / 1000) * 1000));
  return `${out}Waiting for ${counts.active} active and ${counts.blocked} blocked task(s)... (timeout in ${remaining})\n`;
}
