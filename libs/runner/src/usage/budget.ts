import { isZeroTime, type RunsLayout } from '@app/storage';
import { formatGoDuration } from '../go-duration';
import { isUnfinished, ScannedRun } from '../run-scan';
import { stopRun } from '../stop';
import { deliverWebhook, WarnSink, WebhookSettings, webhookWanted } from '@app/webhook';
import { sumUsage, taskTreeRuns, totalTokens } from './aggregate';
import { readBudgetExceeded, writeBudgetExceeded } from './markers';
import { TaskBudget } from './task-settings';

export interface BudgetVerdict {
  exceeded: boolean;
  reason?: string;
  tokens: number;
  cost_usd: number;
  wall_time_ms: number;
}

/** Measures a task tree against its budget (tokens = input + output; wall time since the tree's first run started). */
export function checkBudget(runs: ScannedRun[], budget: TaskBudget, now = Date.now()): BudgetVerdict {
  const usage = sumUsage(runs.map((r) => r.info));
  const tokens = totalTokens(usage);
  const cost = usage.cost_usd ?? 0;
  const starts = runs.map((r) => r.info.start_time).filter((d) => !isZeroTime(d)).map((d) => d.getTime());
  const wall = starts.length ? now - Math.min(...starts) : 0;
  const v: BudgetVerdict = { exceeded: false, tokens, cost_usd: cost, wall_time_ms: wall };
  if (budget.max_tokens && tokens > budget.max_tokens) v.reason = `tokens ${tokens} > max ${budget.max_tokens}`;
  else if (budget.max_cost_usd && cost > budget.max_cost_usd) v.reason = `cost $${cost} > max $${budget.max_cost_usd}`;
  else if (budget.max_wall_time_ms && wall > budget.max_wall_time_ms) v.reason = `wall time ${formatGoDuration(Math.round(wall / 1000) * 1000)} > max ${formatGoDuration(budget.max_wall_time_ms)}`;
  v.exceeded = v.reason !== undefined;
  return v;
}

export interface BudgetPayload {
  event: 'budget_exceeded';
  project_id: string;
  task_id: string;
  run_id: string;
  reason: string;
  tokens: number;
  cost_usd: number;
  wall_time_seconds: number;
  max_tokens?: number;
  max_cost_usd?: number;
  max_wall_time_seconds?: number;
}

export interface EnforceContext {
  layout: RunsLayout;
  projectId: string;
  taskId: string;
  budget: TaskBudget;
  bus: WarnSink;
  webhook?: WebhookSettings;
  webhookBackoffMs?: number[];
  stopGraceMs?: number;
  onWebhook?(delivery: Promise<boolean>): void;
}

/**
 * Checks the tree and, the first time it is over budget: marks the task (BUDGET-EXCEEDED), posts
 * BUDGET_EXCEEDED on the task bus, fires the `budget_exceeded` webhook and stops the tree's
 * unfinished runs gracefully (SIGTERM, grace, SIGKILL; the loop then does not restart).
 * Returns the reason when the tree is over budget.
 */
export async function enforceBudget(ctx: EnforceContext): Promise<string | undefined> {
  const taskDir = ctx.layout.taskDir(ctx.projectId, ctx.taskId);
  const marked = readBudgetExceeded(taskDir);
  if (marked) return marked;
  if (!ctx.budget.max_tokens && !ctx.budget.max_cost_usd && !ctx.budget.max_wall_time_ms) return undefined;
  const runs = taskTreeRuns(ctx.layout, ctx.projectId, ctx.taskId);
  const v = checkBudget(runs, ctx.budget);
  if (!v.exceeded) return undefined;
  const reason = `budget exceeded: ${v.reason}`;
  writeBudgetExceeded(taskDir, reason);
  await ctx.bus.append({
    type: 'BUDGET_EXCEEDED',
    project_id: ctx.projectId,
    task_id: ctx.taskId,
    run_id: '',
    body: `${reason}; stopping the task tree (not restarting)`,
  });
  if (webhookWanted(ctx.webhook, 'budget_exceeded')) {
    const payload: BudgetPayload = {
      event: 'budget_exceeded',
      project_id: ctx.projectId,
      task_id: ctx.taskId,
      run_id: '',
      reason,
      tokens: v.tokens,
      cost_usd: v.cost_usd,
      wall_time_seconds: Math.round(v.wall_time_ms / 1000),
      ...(ctx.budget.max_tokens ? { max_tokens: ctx.budget.max_tokens } : {}),
      ...(ctx.budget.max_cost_usd ? { max_cost_usd: ctx.budget.max_cost_usd } : {}),
      ...(ctx.budget.max_wall_time_ms ? { max_wall_time_seconds: ctx.budget.max_wall_time_ms / 1000 } : {}),
    };
    const delivery = deliverWebhook(ctx.webhook, payload, ctx.bus, { backoffMs: ctx.webhookBackoffMs });
    ctx.onWebhook?.(delivery);
  }
  for (const r of runs) {
    if (!isUnfinished(r.info)) continue;
    await stopRun(r.dir, { stoppedBy: `budget of task ${ctx.taskId}`, graceMs: ctx.stopGraceMs }).catch(() => undefined);
  }
  return reason;
}
