import { existsSync, rmSync } from 'node:fs';
import { fileHeldOpen } from '@app/storage';
import { isAbsolute, join, resolve } from 'node:path';
import { git } from './git';
import { listWorktrees } from './list';

/** `git rev-parse --git-path <name>` of the worktree at `dir`, absolute. */
async function gitPath(dir: string, name: string): Promise<string> {
  const p = await git(dir, ['rev-parse', '--git-path', name]);
  return isAbsolute(p) ? p : join(dir, p);
}

/**
 * The lock files a git process that a merge driver ran, killed mid-operation (SIGKILL of its
 * process group), leaves behind and that refuse every later git call: the index locks of the base
 * branch's checkout and of the task's worktree, and the loose-ref locks of both branches. Removes
 * those no process holds open and returns their paths; a lock some process holds is a live git's
 * and stays. Only for a merge whose previous attempt died (merge-run.ts).
 */
export async function removeStaleGitLocks(repo: string, taskWorktree: string, refs: string[]): Promise<string[]> {
  const checkouts = (await listWorktrees(repo)).filter((w) => refs.includes(w.branch ?? '')).map((w) => resolve(w.path));
  const dirs = [...new Set([...checkouts, ...(existsSync(taskWorktree) ? [resolve(taskWorktree)] : [])])];
  const candidates = [...(await Promise.all(dirs.map((d) => gitPath(d, 'index.lock')))), ...(await Promise.all(refs.map((r) => gitPath(repo, `${r}.lock`))))];
  const removed: string[] = [];
  for (const lock of new Set(candidates)) {
    if (!existsSync(lock) || fileHeldOpen(lock)) continue;
    rmSync(lock, { force: true });
    removed.push(lock);
  }
  return removed;
}
