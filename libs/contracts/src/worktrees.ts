// The per-file view of a task's worktree diff (GET /api/projects/{p}/tasks/{t}/diff): parsed by
// libs/worktree (parsePatch), rendered by the dashboard.

export interface DiffHunk {
  header: string;
  lines: string[];
}

export interface DiffFile {
  path: string;
  old_path?: string;
  status: 'added' | 'modified' | 'deleted' | 'renamed';
  additions: number;
  deletions: number;
  binary: boolean;
  hunks: DiffHunk[];
}
