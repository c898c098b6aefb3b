import type { RunInfo } from '@app/storage';
import type { PlannerEntry, PlannerTaskRequest } from './planner-state';
import type { LaunchRequest } from './task-launcher';

/**
 * One API-created task: what the launcher needs (its `prompt` is the first run's prompt) plus,
 * optionally, the original create request, which is persisted with the entry.
 */
export type PlannerSubmission = LaunchRequest & { request?: PlannerTaskRequest };

/** The persisted create request of a submission (built from the launch fields when absent). */
export function requestOf(s: PlannerSubmission): PlannerTaskRequest {
  if (s.request) return s.request;
  const req: PlannerTaskRequest = { project_id: s.projectId, task_id: s.taskId, agent_type: s.agentType, prompt: s.prompt };
  if (s.config && Object.keys(s.config).length > 0) req.config = s.config;
  if (s.projectRoot) req.project_root = s.projectRoot;
  if (s.attachMode) req.attach_mode = s.attachMode;
  return req;
}

/** Queue order: order number, then submission time, then ids. */
export function entryLess(a: PlannerEntry, b: PlannerEntry): number {
  return (
    a.order - b.order ||
    a.submittedAt.getTime() - b.submittedAt.getTime() ||
    a.projectId.localeCompare(b.projectId) ||
    a.taskId.localeCompare(b.taskId) ||
    a.runId.localeCompare(b.runId)
  );
}

export function isRunningRootRun(info: RunInfo): boolean {
  return info.status === 'running' && !info.parent_run_id && !(info.end_time && info.end_time.getUTCFullYear() > 1);
}
