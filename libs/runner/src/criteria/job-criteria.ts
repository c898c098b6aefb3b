import { existsSync } from 'node:fs';
import type { BusWriters } from '@app/messagebus';
import { isTaskDone } from '@app/storage';
import { inheritedEnv } from '../job-options';
import { CriteriaHookContext, criteriaHooks, CriteriaLoopOptions } from './loop-hooks';

/** What a job's criteria check needs: the loop's context minus what the check opens itself (its bus). */
export type JobCriteriaContext = CriteriaLoopOptions & Omit<CriteriaHookContext, 'bus' | 'post' | 'signal'> & {
  /** Opens the task bus the check's verdict is posted to (the composition root's factory). */
  writers: BusWriters;
  /** The environment the criteria inherit (default: this process's; the task supervisor passes its client's). */
  baseEnv?: NodeJS.ProcessEnv;
};

/**
 * `run-agent job` (one run, no loop): given criteria are stored for the task once the job has
 * created its folder; when the job's agent wrote DONE and the task has criteria, they run now.
 * Returns why the job is not done (criteria failed or cannot be resolved; DONE is then set aside),
 * or undefined.
 */
export async function withJobCriteria<T extends { runId?: string }>(ctx: JobCriteriaContext, run: () => Promise<T>): Promise<{ result: T; rejected?: string }> {
  const { layout } = ctx;
  const taskDir = layout.taskDir(ctx.projectId, ctx.taskId);
  const doneBefore = existsSync(taskDir) && isTaskDone(taskDir);
  const result = await run();
  const given = ctx.doneCriteria !== undefined || ctx.doneCriteriaTimeoutMs !== undefined;
  if (!existsSync(taskDir) || (!given && (doneBefore || !isTaskDone(taskDir)))) return { result };
  const bus = ctx.writers(layout.taskBus(ctx.projectId, ctx.taskId));
  try {
    const post = async (type: string, body: string): Promise<void> => {
      await bus.append({ type, project_id: ctx.projectId, task_id: ctx.taskId, run_id: result.runId ?? '', body });
    };
    const hooks = criteriaHooks(ctx, { ...ctx, bus, post, env: { ...inheritedEnv(ctx), JRUN_PROJECT_ID: ctx.projectId, JRUN_TASK_ID: ctx.taskId, JRUN_TASK_FOLDER: taskDir } });
    if (doneBefore || !isTaskDone(taskDir)) return { result };
    if (hooks.problem) {
      await post('ERROR', hooks.problem);
      return { result, rejected: hooks.problem };
    }
    if (await hooks.accept(result.runId)) return { result };
    return { result, rejected: `completion criteria failed: ${hooks.lastFailure() ?? 'not passed'}` };
  } finally {
    bus.close();
  }
}
