import { type AppConfig, hasDoneFile, type RunsLayout } from '@app/storage';
import type { TaskOptions, TaskResult } from '@app/runner';
import type { GoalWorkflowSpec } from './goal-spec';

export type GoalTaskOutcome = 'done' | 'failed' | 'stopped' | 'blocked';

export interface GoalGraphOptions {
  /** The runs root's layout (of the composition root). */
  layout: RunsLayout;
  spec: GoalWorkflowSpec;
  /** The engine's runTask (RunnerService.runTask in the CLI, so shutdown stops the agents). */
  runTask: (opts: TaskOptions) => Promise<TaskResult>;
  /** Agent for every task instead of the spec's per-task agent. */
  agent?: string;
  config?: AppConfig;
  env?: Record<string, string>;
  maxRestarts?: number;
  restartDelayMs?: number;
  idleTimeoutMs?: number;
  signal?: AbortSignal;
  log?: (line: string) => void;
}

export interface GoalGraphResult {
  outcomes: Record<string, { outcome: GoalTaskOutcome; error?: string }>;
  ok: boolean;
}

/**
 * Runs the tasks of a materialized spec as a DAG: a task starts (its Ralph loop) once all its
 * dependencies are DONE, at most `max_parallel` at a time; a task whose dependency did not
 * finish is reported `blocked` and never started. Tasks already DONE count as done.
 */
export async function runGoalGraph(opts: GoalGraphOptions): Promise<GoalGraphResult> {
  const { spec } = opts;
  const { layout } = opts;
  const log = opts.log ?? (() => undefined);
  const limit = spec.max_parallel > 0 ? spec.max_parallel : 1;
  const outcomes: GoalGraphResult['outcomes'] = {};
  const pending = new Map(spec.tasks.map((t) => [t.task_id, t]));
  const running = new Map<string, Promise<void>>();

  for (const t of spec.tasks) {
    if (hasDoneFile(layout.taskDir(spec.project_id, t.task_id))) {
      outcomes[t.task_id] = { outcome: 'done' };
      pending.delete(t.task_id);
      log(`[done    ] ${t.task_id} (already DONE)`);
    }
  }

  const start = (taskId: string): void => {
    const task = pending.get(taskId)!;
    pending.delete(taskId);
    log(`[start   ] ${taskId}`);
    const run = opts
      .runTask({
        root: layout.root,
        projectId: spec.project_id,
        taskId,
        agent: opts.agent ?? task.agent,
        config: opts.config,
        env: opts.env,
        maxRestarts: opts.maxRestarts,
        restartDelayMs: opts.restartDelayMs,
        idleTimeoutMs: opts.idleTimeoutMs,
        signal: opts.signal,
      })
      .then(
        (r) => ({ outcome: r.status as GoalTaskOutcome, error: r.error }),
        (err: unknown) => ({ outcome: 'failed' as GoalTaskOutcome, error: err instanceof Error ? err.message : String(err) }),
      )
      .then((o) => {
        outcomes[taskId] = o;
        running.delete(taskId);
        log(`[${o.outcome.padEnd(8)}] ${taskId}${o.error ? `: ${o.error}` : ''}`);
      });
    running.set(taskId, run);
  };

  for (;;) {
    let progressed = true;
    while (progressed) {
      progressed = false;
      for (const [taskId, task] of pending) {
        const deps = task.depends_on ?? [];
        const failedDep = deps.find((d) => outcomes[d] && outcomes[d].outcome !== 'done');
        if (failedDep) {
          pending.delete(taskId);
          outcomes[taskId] = { outcome: 'blocked', error: `dependency ${failedDep} ${outcomes[failedDep].outcome}` };
          log(`[blocked ] ${taskId}: dependency ${failedDep} ${outcomes[failedDep].outcome}`);
          progressed = true;
        } else if (!opts.signal?.aborted && running.size < limit && deps.every((d) => outcomes[d]?.outcome === 'done')) {
          start(taskId);
          progressed = true;
        }
      }
    }
    if (running.size === 0) break;
    await Promise.race(running.values());
  }
  for (const taskId of pending.keys()) outcomes[taskId] = { outcome: 'stopped', error: 'not started' };
  return { outcomes, ok: spec.tasks.every((t) => outcomes[t.task_id]?.outcome === 'done') };
}
