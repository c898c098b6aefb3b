import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { type RunsLayout, validateProjectId, validateTaskId, writeFileAtomic } from '@app/storage';
import { RunnerError } from '../runner.errors';

/** Held by hand (`run-agent pause`): a task's or a whole project's loops start no new attempt. */
export const PAUSED_FILE = 'PAUSED';
/** The provider refused the last run until `resume_at` (first line, RFC 3339); the loop waits. */
export const RATE_LIMITED_FILE = 'RATE-LIMITED';
/** The task tree crossed its budget: the loop ended and nothing restarts it until the budget is raised. */
export const BUDGET_EXCEEDED_FILE = 'BUDGET-EXCEEDED';

export interface PauseTarget {
  /** The runs root's layout (of the composition root). */
  layout: RunsLayout;
  projectId: string;
  taskId?: string;
}

function targetDir(t: PauseTarget): string {
  const { layout } = t;
  validateProjectId(t.projectId);
  if (t.taskId === undefined) return layout.projectDir(t.projectId);
  validateTaskId(t.taskId);
  return layout.taskDir(t.projectId, t.taskId);
}

/** Writes PAUSED in the task (or project) folder; true when it was not paused before. */
export function pause(t: PauseTarget, by = 'run-agent pause'): boolean {
  const dir = targetDir(t);
  if (!existsSync(dir)) throw new RunnerError('NOT_FOUND', `${t.taskId ? `task ${t.taskId}` : `project ${t.projectId}`} not found`);
  const path = join(dir, PAUSED_FILE);
  const was = existsSync(path);
  if (!was) writeFileAtomic(path, `${new Date().toISOString()} ${by.replace(/[\r\n]/g, ' ')}\n`);
  return !was;
}

/** Removes PAUSED; true when it was paused. */
export function unpause(t: PauseTarget): boolean {
  const path = join(targetDir(t), PAUSED_FILE);
  const was = existsSync(path);
  rmSync(path, { force: true });
  return was;
}

export function isPaused(taskDir: string): 'task' | 'project' | undefined {
  if (existsSync(join(taskDir, PAUSED_FILE))) return 'task';
  if (existsSync(join(taskDir, '..', PAUSED_FILE))) return 'project';
  return undefined;
}

export function writeRateLimited(taskDir: string, resumeAt: Date, runId: string): void {
  writeFileAtomic(join(taskDir, RATE_LIMITED_FILE), `${resumeAt.toISOString()}\nrun_id: ${runId}\n`);
}

export function readRateLimited(taskDir: string): Date | undefined {
  try {
    const d = new Date(readFileSync(join(taskDir, RATE_LIMITED_FILE), 'utf8').split('\n')[0].trim());
    return Number.isNaN(d.getTime()) ? undefined : d;
  } catch {
    return undefined;
  }
}

export function clearRateLimited(taskDir: string): void {
  rmSync(join(taskDir, RATE_LIMITED_FILE), { force: true });
}

export function readBudgetExceeded(taskDir: string): string | undefined {
  try {
    return readFileSync(join(taskDir, BUDGET_EXCEEDED_FILE), 'utf8').trim() || 'budget exceeded';
  } catch {
    return undefined;
  }
}

export function writeBudgetExceeded(taskDir: string, reason: string): void {
  writeFileAtomic(join(taskDir, BUDGET_EXCEEDED_FILE), `${reason}\n`);
}

export function clearBudgetExceeded(taskDir: string): void {
  rmSync(join(taskDir, BUDGET_EXCEEDED_FILE), { force: true });
}

/** The usage-related state of a task for status/list/API: rate_limited, paused or budget_exceeded. */
export interface TaskHoldState {
  paused?: 'task' | 'project';
  rate_limited_until?: string;
  budget_exceeded?: string;
}

export function taskHoldState(taskDir: string): TaskHoldState {
  const out: TaskHoldState = {};
  const p = isPaused(taskDir);
  if (p) out.paused = p;
  const r = readRateLimited(taskDir);
  if (r) out.rate_limited_until = r.toISOString();
  const b = readBudgetExceeded(taskDir);
  if (b) out.budget_exceeded = b;
  return out;
}
