import type { WorktreeStatus } from './worktree-status';

/** Table cells BRANCH and MERGE, shown only when some task has a worktree. */
export function worktreeCells(row: WorktreeStatus): string[] {
  return [row.branch ?? '-', row.merge_status ?? (row.branch ? 'unmerged' : '-')];
}
