import { rmSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { WorktreeError } from './worktree.errors';
import { git, gitRaw } from './git';

export interface ListedWorktree {
  path: string;
  branch?: string;
  locked?: string;
  prunable?: boolean;
}

export async function listWorktrees(repo: string): Promise<ListedWorktree[]> {
  const out = await git(repo, ['worktree', 'list', '--porcelain']);
  const list: ListedWorktree[] = [];
  let cur: ListedWorktree | undefined;
  for (const line of out.split('\n')) {
    if (line.startsWith('worktree ')) list.push((cur = { path: line.slice(9) }));
    else if (!cur) continue;
    else if (line.startsWith('branch ')) cur.branch = line.slice(7);
    else if (line === 'locked' || line.startsWith('locked ')) cur.locked = line.slice(7).trim() || 'locked';
    else if (line === 'prunable' || line.startsWith('prunable ')) cur.prunable = true;
  }
  return list;
}

/** Removes a worktree folder and its registration, whatever state a crash left them in. */
export async function removeWorktreeFolder(repo: string, path: string): Promise<void> {
  // only the runner's own folders (`<repo>/.conductor/…`): a path read from a WORKTREE.yaml is never trusted to name what gets deleted
  const own = resolve(repo, '.conductor');
  const rel = relative(own, resolve(path));
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) throw new WorktreeError('WORKTREE', `WORKTREE.yaml: path ${JSON.stringify(path)} is not inside ${own}; nothing removed`);
  const entry = (await listWorktrees(repo)).find((w) => resolve(w.path) === resolve(path));
  if (entry?.locked) await gitRaw(repo, ['worktree', 'unlock', '--end-of-options', path]);
  if (entry) await gitRaw(repo, ['worktree', 'remove', '--force', '--force', '--end-of-options', path]);
  rmSync(path, { recursive: true, force: true });
  await git(repo, ['worktree', 'prune']);
}
