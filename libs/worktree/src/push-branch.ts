import { checkGitRemote } from '@app/storage';
import { WorktreeError } from './worktree.errors';
import { checkRefArg, git, gitRaw } from './git';

/** What `pushTaskBranch` did: the commit now at `refs/heads/<branch>` on the remote. */
export interface PushResult {
  remote: string;
  branch: string;
  commit: string;
  /** false: the remote already had that commit on the branch (nothing was sent). */
  updated: boolean;
}

/**
 * Pushes a task's branch to a remote (issue #34, the first step of the merge queue's pull-request
 * mode): `git push <remote> refs/heads/<branch>:refs/heads/<branch>` with the real git, no force.
 * The remote is a configured remote name or URL (a local bare repository in the tests). The branch
 * on the remote moves only forward; a remote branch that diverged (someone pushed to it) is a
 * WORKTREE error naming it, never overwritten. Credentials are git's own (credential helper, SSH);
 * nothing here reads or logs a token.
 */
export async function pushTaskBranch(repo: string, remote: string, branch: string): Promise<PushResult> {
  checkRefArg(branch, 'branch');
  try {
    checkGitRemote(remote);
  } catch (err) {
    throw new WorktreeError('INVALID_INPUT', `remote ${(err as Error).message}`);
  }
  const commit = await git(repo, ['rev-parse', '--verify', '-q', '--end-of-options', `refs/heads/${branch}^{commit}`]).catch(() => {
    throw new WorktreeError('INVALID_INPUT', `branch ${JSON.stringify(branch)} does not exist in ${repo}`);
  });
  const before = await remoteCommit(repo, remote, branch);
  if (before === commit) return { remote, branch, commit, updated: false };
  const r = await gitRaw(repo, ['push', '--porcelain', '--end-of-options', remote, `refs/heads/${branch}:refs/heads/${branch}`]);
  if (r.code !== 0) {
    const rejected = /\[rejected\]|non-fast-forward|fetch first/.test(r.stdout + r.stderr);
    const detail = rejected ? `the remote branch ${branch} has commits the task's branch lacks (not overwritten)` : (r.stderr.trim() || r.stdout.trim()).split('\n')[0];
    throw new WorktreeError('WORKTREE', `git push to ${remote} failed: ${detail}`);
  }
  return { remote, branch, commit, updated: true };
}

/** The commit at `refs/heads/<branch>` on the remote (undefined when it has no such branch). */
async function remoteCommit(repo: string, remote: string, branch: string): Promise<string | undefined> {
  const r = await gitRaw(repo, ['ls-remote', '--heads', '--end-of-options', remote, `refs/heads/${branch}`]);
  if (r.code !== 0) throw new WorktreeError('WORKTREE', `git ls-remote ${remote} failed: ${(r.stderr.trim() || r.stdout.trim()).split('\n')[0]}`);
  const line = r.stdout.split('\n').find((l) => l.endsWith(`\trefs/heads/${branch}`));
  return line?.split('\t')[0];
}
