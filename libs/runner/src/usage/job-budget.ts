import { existsSync } from 'node:fs';
import type { AppConfig, RunsLayout } from '@app/storage';
import type { BusWriters } from '@app/messagebus';
import { enforceBudget } from './budget';
import { everyWithoutOverlap } from '../sleep';
import { DEFAULT_HOLD_POLL_MS } from './loop-hooks';
import { clearBudgetExceeded } from './markers';
import { effectiveSettings, hasSettings, TaskSettings, writeTaskSettings } from './task-settings';

export interface JobBudgetContext {
  layout: RunsLayout;
  /** Opens the task bus the budget's verdicts are posted to (the composition root's factory). */
  writers: BusWriters;
  projectId: string;
  taskId: string;
  config?: AppConfig;
  budget: TaskSettings;
  pollMs?: number;
  webhookBackoffMs?: number[];
}

/**
 * `run-agent job --max-tokens …`: stores the budget for the job's task, enforces it on the job's
 * tree while the job runs (child runs report usage as they finish) and once more at its end.
 * Returns the job's result and the budget verdict (undefined when within budget).
 */
export async function withJobBudget<T>(ctx: JobBudgetContext, run: () => Promise<T>): Promise<{ result: T; exceeded?: string }> {
  const taskDir = ctx.layout.taskDir(ctx.projectId, ctx.taskId);
  // stored once the job has created its task folder (a refused job leaves nothing behind)
  let stored = !hasSettings(ctx.budget);
  const store = (): boolean => {
    if (!stored && existsSync(taskDir)) {
      writeTaskSettings(taskDir, ctx.budget);
      clearBudgetExceeded(taskDir);
      stored = true;
    }
    return stored;
  };
  const bus = ctx.writers(ctx.layout.taskBus(ctx.projectId, ctx.taskId));
  const pending: Promise<boolean>[] = [];
  const enforce = async (): Promise<string | undefined> => {
    if (!store()) return undefined;
    return enforceBudget({
      layout: ctx.layout,
      projectId: ctx.projectId,
      taskId: ctx.taskId,
      budget: effectiveSettings(taskDir, ctx.config),
      bus,
      webhook: ctx.config?.webhook,
      webhookBackoffMs: ctx.webhookBackoffMs,
      onWebhook: (w) => pending.push(w),
    });
  };
  const stopWatching = everyWithoutOverlap(enforce, ctx.pollMs ?? DEFAULT_HOLD_POLL_MS);
  try {
    const result = await run();
    const exceeded = await enforce();
    await Promise.allSettled(pending);
    return { result, exceeded };
  } finally {
    stopWatching();
    bus.close();
  }
}
