import { readWorktreeRecord } from '@app/worktree';

/** status fields of a task in a git worktree (docs/worktrees.md); {} for other tasks. */
export interface WorktreeStatus {
  worktree?: string;
  branch?: string;
  base_commit?: string;
  /** merged | conflict | failed; absent before the first merge attempt. */
  merge_status?: string;
}

export function worktreeStatus(taskDir: string): WorktreeStatus {
  let rec;
  try {
    rec = readWorktreeRecord(taskDir);
  } catch {
    return {};
  }
  if (!rec) return {};
  return { worktree: rec.path, branch: rec.branch, base_commit: rec.base_commit, ...(rec.merge_status ? { merge_status: rec.merge_status } : {}) };
}
