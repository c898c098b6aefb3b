import { existsSync } from 'node:fs';
import { git, gitRaw } from './git';
import { readWorktreeRecord, type WorktreeRecord } from './record';

/** Commits need an identity; repositories without one get conductor's (never overriding a configured one). */
export async function identityEnv(repo: string): Promise<Record<string, string>> {
  const has = (await gitRaw(repo, ['config', 'user.email'])).code === 0 && (await gitRaw(repo, ['config', 'user.name'])).code === 0;
  if (has) return {};
  return { GIT_AUTHOR_NAME: 'conductor', GIT_AUTHOR_EMAIL: 'conductor@localhost', GIT_COMMITTER_NAME: 'conductor', GIT_COMMITTER_EMAIL: 'conductor@localhost' };
}

/** What the agent left uncommitted in its worktree becomes one commit on the task branch (the merge and the pull request both start so). */
export async function commitLeftovers(rec: WorktreeRecord, env: Record<string, string>): Promise<void> {
  if (rec.removed_at || !existsSync(rec.path)) return;
  if ((await git(rec.path, ['status', '--porcelain'])).trim() === '') return;
  await git(rec.path, ['add', '-A', '--', '.']);
  await git(rec.path, ['commit', '-q', '--no-verify', '-m', `conductor: uncommitted changes of ${rec.task_id}`], env);
}

/** commitLeftovers for a task folder's worktree (nothing when the task has none). */
export async function commitTaskLeftovers(taskDir: string): Promise<void> {
  const rec = readWorktreeRecord(taskDir);
  if (rec) await commitLeftovers(rec, await identityEnv(rec.repo));
}
