import type { CreateTaskRequest } from '../api/types';
import { parseDependencies } from './taskid';

/** The New task dialog's optional fields as typed (#30.11): repository, worktree and budget. */
export interface TaskOptionsForm {
  projectRoot: string;
  worktree: boolean;
  base: string;
  paths: string;
  maxTokens: string;
  maxCostUsd: string;
  maxWallTime: string;
  /** Completion criteria: one shell command per line (docs/completion-criteria.md). */
  doneCriteria: string;
  doneTimeout: string;
}

export const EMPTY_TASK_OPTIONS: TaskOptionsForm = { projectRoot: '', worktree: false, base: '', paths: '', maxTokens: '', maxCostUsd: '', maxWallTime: '', doneCriteria: '', doneTimeout: '' };

type TaskOptionFields = Pick<CreateTaskRequest, 'project_root' | 'isolation' | 'base' | 'paths' | 'max_tokens' | 'max_cost_usd' | 'max_wall_time' | 'done_criteria' | 'done_criteria_timeout'>;

/**
 * The POST /api/v1/tasks fields of the filled-in options (empty ones left out), or the one line
 * that says what is wrong with a number field (the API takes numbers). The server validates all (docs/usage-and-budgets.md, docs/worktrees.md).
 */
export function taskOptionFields(form: TaskOptionsForm): { fields: TaskOptionFields } | { error: string } {
  const fields: TaskOptionFields = {};
  const root = form.projectRoot.trim();
  if (root) fields.project_root = root;
  if (form.worktree) {
    if (!root) return { error: 'A worktree needs the working repository.' };
    fields.isolation = 'worktree';
    if (form.base.trim()) fields.base = form.base.trim();
    const paths = parseDependencies(form.paths);
    if (paths.length) fields.paths = paths;
  }
  const tokens = form.maxTokens.trim();
  if (tokens) {
    if (!/^\d+$/.test(tokens) || !Number.isSafeInteger(Number(tokens)) || Number(tokens) <= 0) return { error: 'Max tokens must be a positive whole number.' };
    fields.max_tokens = Number(tokens);
  }
  const cost = form.maxCostUsd.trim().replace(/^\$/, '');
  if (cost) {
    if (!/^\d+(\.\d+)?$/.test(cost) || Number(cost) <= 0) return { error: 'Max cost must be a positive amount in US dollars.' };
    fields.max_cost_usd = Number(cost);
  }
  const wall = form.maxWallTime.trim();
  if (wall) fields.max_wall_time = wall; // a duration like 30m; the server checks it (one rule, one place)
  const criteria = form.doneCriteria.split('\n').map((line) => line.trim()).filter((line) => line !== '');
  if (criteria.length) fields.done_criteria = criteria;
  const doneTimeout = form.doneTimeout.trim();
  if (doneTimeout) {
    if (!criteria.length) return { error: 'A criteria timeout needs at least one completion criterion.' };
    fields.done_criteria_timeout = doneTimeout; // the server checks the duration
  }
  return { fields };
}
