import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DiffFile, DiffHunk } from '@app/contracts';
import { WorktreeError } from './worktree.errors';
import { checkRefArg, git } from './git';
import { readWorktreeRecord, WorktreeRecord } from './record';

export interface TaskDiff {
  task_id: string;
  branch: string;
  base_commit: string;
  worktree: string;
  files: DiffFile[];
  patch: string;
}

const DIFF_FLAGS = ['--no-color', '--no-ext-diff', '-M', '--src-prefix=a/', '--dst-prefix=b/'];

/**
 * Everything the task changed against its base commit: its branch's commits plus what is not yet
 * committed in the worktree (untracked files included), staged in a temporary index so the
 * worktree's own index is never touched.
 */
async function worktreePatch(rec: WorktreeRecord): Promise<string> {
  const tmp = mkdtempSync(join(tmpdir(), 'conductor-diff-'));
  try {
    const index = join(tmp, 'index');
    const real = await git(rec.path, ['rev-parse', '--path-format=absolute', '--git-path', 'index']);
    if (existsSync(real)) copyFileSync(real, index);
    const env = { GIT_INDEX_FILE: index };
    await git(rec.path, ['add', '-A', '--', '.'], env);
    return await git(rec.path, ['diff', '--cached', ...DIFF_FLAGS, '--end-of-options', checkRefArg(rec.base_commit, 'base_commit', true), '--'], env);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

export async function taskDiff(taskDir: string): Promise<TaskDiff> {
  const rec = readWorktreeRecord(taskDir);
  if (!rec) throw new WorktreeError('NOT_FOUND', 'task has no worktree (it was not started with --worktree)');
  let patch: string;
  if (!rec.removed_at && existsSync(rec.path)) patch = await worktreePatch(rec);
  else {
    const tip = rec.merged_commit ? `${checkRefArg(rec.merged_commit, 'merged_commit', true)}^2` : checkRefArg(rec.branch, 'branch', true);
    patch = await git(rec.repo, ['diff', ...DIFF_FLAGS, '--end-of-options', checkRefArg(rec.base_commit, 'base_commit', true), tip, '--']);
  }
  return { task_id: rec.task_id, branch: rec.branch, base_commit: rec.base_commit, worktree: rec.path, files: parsePatch(patch), patch };
}

function unquote(path: string): string {
  if (!path.startsWith('"')) return path;
  try {
    return JSON.parse(path) as string;
  } catch {
    return path;
  }
}

/** Splits `git diff` output into files and hunks (the UI shows them file by file). */
export function parsePatch(patch: string): DiffFile[] {
  const files: DiffFile[] = [];
  let file: DiffFile | undefined;
  let hunk: DiffHunk | undefined;
  for (const line of patch.split('\n')) {
    if (line.startsWith('diff --git ')) {
      const m = /^diff --git (?:"?a\/)(.+?)"? (?:"?b\/)(.+?)"?$/.exec(line);
      const path = unquote(m ? m[2] : line.slice(11));
      file = { path, status: 'modified', additions: 0, deletions: 0, binary: false, hunks: [] };
      files.push(file);
      hunk = undefined;
      continue;
    }
    if (!file) continue;
    if (!hunk) {
      if (line.startsWith('new file mode')) file.status = 'added';
      else if (line.startsWith('deleted file mode')) file.status = 'deleted';
      else if (line.startsWith('rename from ')) {
        file.status = 'renamed';
        file.old_path = unquote(line.slice(12));
      } else if (line.startsWith('rename to ')) file.path = unquote(line.slice(10));
      else if (line.startsWith('Binary files ')) file.binary = true;
    }
    if (line.startsWith('@@')) {
      hunk = { header: line, lines: [] };
      file.hunks.push(hunk);
      continue;
    }
    if (!hunk) continue;
    hunk.lines.push(line);
    if (line.startsWith('+')) file.additions++;
    else if (line.startsWith('-')) file.deletions++;
  }
  for (const f of files) {
    const last = f.hunks.at(-1);
    if (last && last.lines.at(-1) === '') last.lines.pop();
  }
  return files;
}
