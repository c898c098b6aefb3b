import type { UsageTotals } from '@app/contracts';
import type { RunInfo, RunsLayout } from '@app/storage';
import { taskRuns } from '../run-scan';
import { sumUsage, totalTokens } from './aggregate';
import { taskHoldState, type TaskHoldState } from './markers';

export type TaskHold = 'rate_limited' | 'paused' | 'budget_exceeded';

/** What status, list and the API show about a task's usage: its own runs' usage and a hold state. */
export interface TaskUsageView {
  /** Overrides the shown status while the task is held (unless it is done or needs input). */
  hold?: TaskHold;
  resume_at?: string;
  budget_exceeded?: string;
  paused?: 'task' | 'project';
  usage?: UsageTotals & { total_tokens: number };
}

/** `runInfos`: the task's run-infos when the caller already read them (the API's cached index). */
/** `held`: the hold markers when the caller already knows them (e.g. none exist in the folder listing). */
export function taskUsageView(layout: RunsLayout, projectId: string, taskId: string, done: boolean, runInfos?: RunInfo[], held?: TaskHoldState): TaskUsageView {
  const taskDir = layout.taskDir(projectId, taskId);
  const view: TaskUsageView = {};
  const infos = runInfos ?? taskRuns(taskDir).map((r) => r.info);
  if (infos.some((i) => i.usage)) {
    const u = sumUsage(infos);
    view.usage = { ...u, total_tokens: totalTokens(u) };
  }
  held ??= taskHoldState(taskDir);
  if (held.budget_exceeded) view.budget_exceeded = held.budget_exceeded;
  if (held.paused) view.paused = held.paused;
  if (held.rate_limited_until) view.resume_at = held.rate_limited_until;
  if (done) return view;
  if (held.budget_exceeded) view.hold = 'budget_exceeded';
  else if (held.rate_limited_until) view.hold = 'rate_limited';
  else if (held.paused) view.hold = 'paused';
  return view;
}
