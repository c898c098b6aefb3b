import type { TaskStartRequest, TaskStartResult } from '../task-starter';

/**
 * What the GitHub adapter asks of the app (the API provides it with its own services): start a
 * task, post to its bus and wake it, send it to needs_input, stop it.
 */
export interface ForgeTasks {
  start(req: TaskStartRequest): Promise<TaskStartResult>;
  /** Posts `body` to the task's bus and wakes the task (a loop is started when none holds it). */
  wake(projectId: string, taskId: string, type: string, body: string): Promise<void>;
  /** Opens a question on the task (it goes to needs_input; the needs_input webhook fires). */
  needsInput(projectId: string, taskId: string, body: string): Promise<void>;
  /** Stops the task (as DELETE /api/v1/tasks/<id>). */
  stop(projectId: string, taskId: string, reason: string): Promise<void>;
  /** Posts an INFO message to the task's bus (nothing is woken). */
  note(projectId: string, taskId: string, body: string): Promise<void>;
  /** True when the task is done: its DONE stands (completion criteria, when it has any, passed). */
  isDone(projectId: string, taskId: string): boolean;
  /** A title for the task's pull request: the first line of its prompt (TASK.md). */
  title(projectId: string, taskId: string): string;
  /** The task's newest progress messages (type and body), oldest first, for a pull request's summary. */
  recentProgress(projectId: string, taskId: string, max: number): Array<{ type: string; body: string }>;
}

/** A task's own branch (its worktree), as the pull-request side sees it. */
export interface TaskBranch {
  repo: string;
  branch: string;
  /** The branch the worktree was started from ('' when none: a tag or a commit). */
  base_branch: string;
  /** Subjects of the branch's commits that its base lacks, newest first (at most 50). */
  commits: string[];
}

/** The git side of the pull-request mode (the API provides it with the runner's worktree code). */
export interface ForgeBranches {
  /**
   * The task's worktree branch, after what the agent left uncommitted became one commit on it (as
   * the local merge does); undefined when the task has no worktree (yet).
   */
  readyBranch(projectId: string, taskId: string): Promise<TaskBranch | undefined>;
  /** The URL of a remote of the repository (`git remote get-url`). */
  remoteUrl(repo: string, remote: string): Promise<string>;
  /** Pushes the branch forward to the remote (a diverged remote branch is an error, never overwritten). */
  push(repo: string, remote: string, branch: string): Promise<{ commit: string; updated: boolean }>;
}

export const FORGE_BRANCHES = Symbol('FORGE_BRANCHES');

export const FORGE_TASKS = Symbol('FORGE_TASKS');
