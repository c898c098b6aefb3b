import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BusWriter } from '@app/messagebus';
import { AppConfig, withFileLock } from '@app/storage';
import { RunnerError } from '../runner.errors';
import { checkRefArg, git, gitCommonDir, gitRaw } from './git';
import { lastLines, runShell } from './hooks';
import { readWorktreeRecord, updateWorktreeRecord, WorktreeRecord } from './record';
import { worktreeEnv } from './create';
import { listWorktrees, removeWorktreeFolder } from './list';

export interface MergeOptions {
  taskDir: string;
  config?: AppConfig;
  /** How long to wait in the repository's merge queue (default 30 min). */
  queueTimeoutMs?: number;
}

export interface MergeResult {
  task_id: string;
  branch: string;
  base_branch: string;
  /** The new tip of the base branch ('' when the branch had nothing to merge). */
  commit: string;
  already_merged: boolean;
}

const DEFAULT_QUEUE_TIMEOUT_MS = 30 * 60_000;

/** Commits need an identity; repositories without one get conductor's (never overriding a configured one). */
async function identityEnv(repo: string): Promise<Record<string, string>> {
  const has = (await gitRaw(repo, ['config', 'user.email'])).code === 0 && (await gitRaw(repo, ['config', 'user.name'])).code === 0;
  if (has) return {};
  return { GIT_AUTHOR_NAME: 'conductor', GIT_AUTHOR_EMAIL: 'conductor@localhost', GIT_COMMITTER_NAME: 'conductor', GIT_COMMITTER_EMAIL: 'conductor@localhost' };
}

/** What the agent left uncommitted in its worktree becomes one commit on the task branch. */
async function commitLeftovers(rec: WorktreeRecord, env: Record<string, string>): Promise<void> {
  if (rec.removed_at || !existsSync(rec.path)) return;
  if ((await git(rec.path, ['status', '--porcelain'])).trim() === '') return;
  await git(rec.path, ['add', '-A', '--', '.']);
  await git(rec.path, ['commit', '-q', '--no-verify', '-m', `conductor: uncommitted changes of ${rec.task_id}`], env);
}

class MergeStop extends Error {
  constructor(
    readonly kind: 'conflict' | 'failed',
    message: string,
    readonly files: string[] = [],
  ) {
    super(message);
  }
}

/**
 * Merges a task's branch into its base branch through the repository's merge queue (an flock on
 * `<git-dir>/conductor-merge.lock`: one merge at a time per repository). The merge and the verify
 * command run in a scratch worktree; the base branch moves only when both succeed, so a conflict
 * or a red verify leaves it untouched. The outcome is recorded in WORKTREE.yaml and posted on the
 * task bus (MERGE_CONFLICT / MERGE_FAILED name the files and the reason).
 */
export async function mergeTask(opts: MergeOptions): Promise<MergeResult> {
  const rec = readWorktreeRecord(opts.taskDir);
  if (!rec) throw new RunnerError('NOT_FOUND', 'task has no worktree (it was not started with --worktree)');
  const result = (commit: string, already: boolean): MergeResult => ({
    task_id: rec.task_id,
    branch: rec.branch,
    base_branch: rec.base_branch,
    commit,
    already_merged: already,
  });
  if (rec.merge_status === 'merged') return result(rec.merged_commit ?? '', true);
  if (!rec.base_branch) {
    throw new RunnerError('MERGE_FAILED', `task ${rec.task_id} started from a commit, not a branch: nothing to merge into (start it with --base <branch>)`);
  }
  const commonDir = await gitCommonDir(rec.repo);
  const bus = new BusWriter(join(opts.taskDir, 'TASK-MESSAGE-BUS.md'));
  const post = (type: string, body: string): Promise<unknown> =>
    bus.append({ type, project_id: rec.project_id, task_id: rec.task_id, run_id: '', body });
  try {
    const commit = await withFileLock(
      join(commonDir, 'conductor-merge.lock'),
      { timeoutMs: opts.queueTimeoutMs ?? DEFAULT_QUEUE_TIMEOUT_MS, pollMs: 100 },
      () => mergeLocked(rec, opts.config),
    );
    updateWorktreeRecord(opts.taskDir, {
      merge_status: 'merged',
      merged_commit: commit || undefined,
      merged_at: new Date().toISOString(),
      merge_detail: undefined,
      merge_files: undefined,
    });
    await post('INFO', commit ? `merged ${rec.branch} into ${rec.base_branch} (${commit})` : `${rec.branch} had nothing to merge into ${rec.base_branch}`);
    return result(commit, false);
  } catch (err) {
    if (!(err instanceof MergeStop)) throw err;
    updateWorktreeRecord(opts.taskDir, { merge_status: err.kind, merge_detail: err.message, merge_files: err.files });
    const type = err.kind === 'conflict' ? 'MERGE_CONFLICT' : 'MERGE_FAILED';
    const files = err.files.length ? `\nfiles:\n${err.files.map((f) => `- ${f}`).join('\n')}` : '';
    await post(type, `${err.message}${files}`);
    throw new RunnerError(type, err.message + (err.files.length ? ` (${err.files.join(', ')})` : ''));
  } finally {
    bus.close();
  }
}

async function mergeLocked(rec: WorktreeRecord, config?: AppConfig): Promise<string> {
  const env = await identityEnv(rec.repo);
  await commitLeftovers(rec, env);
  const baseRef = `refs/heads/${checkRefArg(rec.base_branch, 'base_branch', true)}`;
  const baseTip = await git(rec.repo, ['rev-parse', '--verify', '--end-of-options', baseRef]);
  const branchTip = await git(rec.repo, ['rev-parse', '--verify', '--end-of-options', `refs/heads/${checkRefArg(rec.branch, 'branch', true)}`]);
  if ((await gitRaw(rec.repo, ['merge-base', '--is-ancestor', branchTip, baseTip])).code === 0) return '';
  const scratch = join(rec.repo, '.conductor', 'merge', rec.task_id);
  await removeWorktreeFolder(rec.repo, scratch);
  await git(rec.repo, ['worktree', 'add', '--detach', scratch, baseTip]);
  let candidate: string;
  try {
    const merge = await gitRaw(scratch, ['merge', '--no-ff', '--no-edit', '-m', `Merge ${rec.branch} (${rec.task_id})`, '--end-of-options', `refs/heads/${rec.branch}`], env);
    if (merge.code !== 0) {
      const files = (await git(scratch, ['diff', '--name-only', '--diff-filter=U'])).split('\n').filter(Boolean);
      await gitRaw(scratch, ['merge', '--abort']);
      if (files.length) {
        throw new MergeStop('conflict', `merge of ${rec.branch} into ${rec.base_branch} conflicts; rebase the task branch onto ${rec.base_branch} and merge again`, files);
      }
      throw new MergeStop('failed', `merge of ${rec.branch} into ${rec.base_branch} failed: ${lastLines(merge.stderr || merge.stdout, 5)}`);
    }
    candidate = await git(scratch, ['rev-parse', 'HEAD']);
    const verify = config?.worktree?.verify;
    if (verify) {
      const r = await runShell(verify, scratch, { ...worktreeEnv({ ...rec, path: scratch }), JRUN_TASK_ID: rec.task_id, JRUN_PROJECT_ID: rec.project_id });
      if (r.code !== 0) {
        const tail = lastLines(r.output);
        const files = (await git(scratch, ['diff', '--name-only', baseTip, candidate])).split('\n').filter(Boolean);
        throw new MergeStop('failed', `verify command ${JSON.stringify(verify)} failed with exit code ${r.code}; ${rec.base_branch} left unchanged${tail ? `\n${tail}` : ''}`, files);
      }
    }
  } finally {
    await removeWorktreeFolder(rec.repo, scratch).catch(() => undefined);
  }
  await advanceBase(rec, baseRef, baseTip, candidate);
  return candidate;
}

/** Moves the base branch to the verified merge; a checkout of it is fast-forwarded (never overwriting local edits). */
async function advanceBase(rec: WorktreeRecord, baseRef: string, baseTip: string, candidate: string): Promise<void> {
  const checkout = (await listWorktrees(rec.repo)).find((w) => w.branch === baseRef);
  if (!checkout) {
    await git(rec.repo, ['update-ref', '-m', `conductor: merge ${rec.branch}`, baseRef, candidate, baseTip]);
    return;
  }
  const ff = await gitRaw(resolve(checkout.path), ['merge', '--ff-only', '-q', candidate]);
  if (ff.code !== 0) {
    throw new MergeStop(
      'failed',
      `cannot update the checkout of ${rec.base_branch} at ${checkout.path}: ${lastLines(ff.stderr || ff.stdout, 5)}; ${rec.base_branch} left unchanged`,
    );
  }
}
