import type { DiffFile } from '@app/contracts';
import { api, ApiClient, ApiError } from './client';

export type { DiffFile } from '@app/contracts';

/** `worktree` of a task (GET /api/projects/{p}/tasks/{t}); absent for tasks without one. */
export interface WorktreeInfo {
  path: string;
  branch: string;
  base_commit: string;
  base_branch?: string;
  port?: number;
  paths?: string[];
  merge_status?: 'merged' | 'conflict' | 'failed';
  merge_detail?: string;
  merge_files?: string[];
  merged_commit?: string;
  /** The approved repository setup script that ran in the worktree (run-agent approve-setup). */
  setup_script?: { path: string; sha256: string };
  removed?: boolean;
}

export interface TaskDiff {
  task_id: string;
  branch: string;
  base_commit: string;
  files: DiffFile[];
  worktree?: WorktreeInfo;
}

const enc = encodeURIComponent;

/** The task's diff against its base, or null when the task has no worktree (404). */
export async function fetchTaskDiff(p: string, t: string, client: ApiClient = api): Promise<TaskDiff | null> {
  try {
    return await client.request<TaskDiff>(`/api/projects/${enc(p)}/tasks/${enc(t)}/diff`);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
}

export async function fetchWorktree(p: string, t: string, client: ApiClient = api): Promise<WorktreeInfo | null> {
  const task = await client.request<{ worktree?: WorktreeInfo }>(`/api/projects/${enc(p)}/tasks/${enc(t)}?include_files=0`);
  return task.worktree ?? null;
}

/** Enqueues the merge and resolves when it is done; a conflict or red verify rejects (409) with the reason. */
export function mergeTask(p: string, t: string, client: ApiClient = api): Promise<{ commit: string; already_merged: boolean }> {
  return client.request(`/api/projects/${enc(p)}/tasks/${enc(t)}/merge`, { method: 'POST' });
}

/** Badge text and tone of a worktree's merge state. */
export function mergeState(w: WorktreeInfo): { label: string; tone: 'ok' | 'error' | 'idle' } {
  if (w.merge_status === 'merged') return { label: 'merged', tone: 'ok' };
  if (w.merge_status === 'conflict') return { label: 'merge conflict', tone: 'error' };
  if (w.merge_status === 'failed') return { label: 'merge failed', tone: 'error' };
  return { label: 'unmerged', tone: 'idle' };
}

/** A task's GitHub pull request as the server recorded it (GET …/pull-request). */
export interface PullRequestInfo {
  repository: string;
  /** The forge rule whose issue started the task, or `request`. */
  source: string;
  state: 'started' | 'stopped';
  pull?: { state: 'opening' | 'open' | 'closed'; number?: number; url?: string; draft?: boolean; ready_at?: string };
}

/** The recorded pull request, or null when the task has none (404). */
export async function fetchPullRequest(p: string, t: string, client: ApiClient = api): Promise<PullRequestInfo | null> {
  try {
    return await client.request<PullRequestInfo>(`/api/projects/${enc(p)}/tasks/${enc(t)}/pull-request`);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
}

/** Pushes the task's branch and opens (or updates) its pull request; refusals reject with the server's reason. */
export function openPullRequest(p: string, t: string, client: ApiClient = api): Promise<{ outcome: string; number?: number; url?: string; ready?: boolean }> {
  return client.request(`/api/projects/${enc(p)}/tasks/${enc(t)}/pull-request`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
}

/** Badge text and tone of a pull request. */
export function pullState(info: PullRequestInfo): { label: string; tone: 'ok' | 'error' | 'idle' } {
  const pull = info.pull;
  if (!pull?.number) return { label: 'pull request opening', tone: 'idle' };
  if (pull.state === 'closed' || info.state === 'stopped') return { label: `#${pull.number} closed`, tone: 'error' };
  return pull.ready_at ? { label: `#${pull.number} ready for review`, tone: 'ok' } : { label: `#${pull.number} draft`, tone: 'idle' };
}
