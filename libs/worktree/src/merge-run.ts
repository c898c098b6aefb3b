import { join, resolve } from 'node:path';
import type { BusWriters } from '@app/messagebus';
import { StorageError, withFileLock, TASK_BUS_FILE } from '@app/storage';
import { errorText } from '@app/storage';
import { checkRefArg, git, gitCommonDir, gitRaw } from './git';
import { lastLines, runShell } from './hooks';
import { commitLeftovers, identityEnv } from './leftovers';
import { claimHead, Finish, isPending, MergeQueueEntry, queueEntry, finishEntry, readMergeQueue } from './merge-queue';
import { readWorktreeRecord, updateWorktreeRecord, WorktreeRecord } from './record';
import { worktreeEnv } from './create';
import { listWorktrees, removeWorktreeFolder } from './list';
import { removeStaleGitLocks } from './stale-git-locks';

/**
 * Runs the queued merges of one repository, in queue order, while holding its merge lock
 * (`<git-dir>/conductor-merge.lock`). Whoever holds the lock runs the head of the queue, whoever
 * queued it: so merges keep their order across processes and after a crash. An entry found
 * `verifying` under the lock was interrupted (its runner died, releasing the lock): it is
 * re-verified from a fresh scratch worktree.
 */

export class MergeStop extends Error {
  constructor(
    readonly kind: 'conflict' | 'failed',
    message: string,
    readonly files: string[] = [],
  ) {
    super(message);
  }
}

/** Runs `fn` under the repository's merge lock if it is free right now; false when another process holds it. */
export async function tryMergeLock(commonDir: string, fn: () => Promise<void>): Promise<boolean> {
  let entered = false;
  try {
    await withFileLock(join(commonDir, 'conductor-merge.lock'), { timeoutMs: 0 }, () => {
      entered = true;
      return fn();
    });
    return true;
  } catch (err) {
    if (!entered && err instanceof StorageError && err.code === 'LOCK_TIMEOUT') return false;
    throw err;
  }
}

/** Runs queue entries in order until `untilSeq` is finished (every pending one when undefined). Call with the merge lock held. */
export async function drainQueue(repo: string, commonDir: string, writers: BusWriters, untilSeq?: number): Promise<number> {
  let ran = 0;
  for (;;) {
    if (untilSeq !== undefined && !isPending(queueEntry(repo, untilSeq))) return ran;
    const head = await claimHead(repo, commonDir);
    if (!head) return ran;
    await runEntry(repo, commonDir, head, writers);
    ran++;
  }
}

function taskRecordFor(repo: string, entry: MergeQueueEntry): WorktreeRecord {
  const rec = readWorktreeRecord(entry.task_dir);
  if (!rec) throw new Error(`${entry.task_dir} has no WORKTREE.yaml`);
  // the queue names the task; the task's own record must agree before anything runs for it
  if (rec.task_id !== entry.task_id || rec.branch !== entry.branch || rec.base_branch !== entry.base_branch || resolve(rec.repo) !== resolve(repo)) {
    throw new Error(`${entry.task_dir}/WORKTREE.yaml does not match the queued merge`);
  }
  return rec;
}

async function runEntry(repo: string, commonDir: string, entry: MergeQueueEntry, writers: BusWriters): Promise<void> {
  let rec: WorktreeRecord | undefined;
  let finish: Finish;
  // an entry claimed more than once: its previous owner died during it (killed, crashed)
  const interrupted = entry.attempts > 1;
  try {
    rec = taskRecordFor(repo, entry);
    if (rec.merge_status === 'merged') {
      finish = { state: 'merged', outcome: 'nothing', commit: rec.merged_commit, detail: 'already merged' };
      if (interrupted && rec.merged_commit) {
        // the interrupted attempt merged and recorded it on the task, then died before the queue said so
        finish = { state: 'merged', outcome: 'merged', commit: rec.merged_commit, detail: 'merged by the interrupted attempt, which died before recording it in the queue' };
        await post(writers, entry.task_dir, rec, 'INFO', `found ${rec.branch} merged into ${rec.base_branch} (${rec.merged_commit}) by the interrupted attempt ${entry.attempts - 1}; recorded, not merged again`);
      }
    } else {
      if (interrupted) {
        await post(writers, entry.task_dir, rec, 'INFO', `re-verifying the merge of ${rec.branch} into ${rec.base_branch} from a clean scratch worktree (attempt ${entry.attempts}; the previous one was interrupted)`);
        const locks = await removeStaleGitLocks(rec.repo, rec.path, [`refs/heads/${rec.base_branch}`, `refs/heads/${rec.branch}`]);
        if (locks.length) await post(writers, entry.task_dir, rec, 'INFO', `removed the lock file(s) the interrupted attempt's git left behind (no process held them): ${locks.join(', ')}`);
      }
      const commit = await mergeLocked(rec, entry.verify);
      // nothing to merge after an interrupted attempt: that attempt moved the base and died before recording it
      const found = !commit && interrupted ? await mergeCommitOf(rec) : undefined;
      if (found) finish = { state: 'merged', outcome: 'merged', commit: found, detail: `found merged by the interrupted attempt ${entry.attempts - 1}, not merged again` };
      else finish = { state: 'merged', outcome: commit ? 'merged' : 'nothing', commit: commit || undefined };
    }
  } catch (err) {
    if (err instanceof MergeStop) finish = { state: 'failed', outcome: err.kind, detail: err.message, files: err.files };
    else finish = { state: 'failed', outcome: 'error', detail: errorText(err) };
  }
  if (rec && rec.merge_status !== 'merged') {
    try {
      await recordOnTask(writers, entry.task_dir, rec, finish);
    } catch (err) {
      finish.detail = `${finish.detail ? `${finish.detail}; ` : ''}recording the outcome on the task failed: ${errorText(err)}`;
    }
  }
  await finishEntry(repo, commonDir, entry.seq, finish);
}

/** The merge commit of the base branch that brought in the task branch's tip (undefined: none, e.g. the branch had no commits of its own). */
async function mergeCommitOf(rec: WorktreeRecord): Promise<string | undefined> {
  const tip = await git(rec.repo, ['rev-parse', '--verify', '--end-of-options', `refs/heads/${checkRefArg(rec.branch, 'branch', true)}`]);
  const base = `refs/heads/${checkRefArg(rec.base_branch, 'base_branch', true)}`;
  const merges = await git(rec.repo, ['rev-list', '--merges', '--parents', '--ancestry-path', '--reverse', '--end-of-options', `${tip}..${base}`]);
  return merges
    .split('\n')
    .map((l) => l.split(' '))
    .find((parents) => parents[2] === tip)?.[0];
}

/** WORKTREE.yaml and the task bus say how the merge ended (MERGE_CONFLICT / MERGE_FAILED name the files). */
async function recordOnTask(writers: BusWriters, taskDir: string, rec: WorktreeRecord, f: Finish): Promise<void> {
  if (f.state === 'merged') {
    updateWorktreeRecord(taskDir, { merge_status: 'merged', merged_commit: f.commit, merged_at: new Date().toISOString(), merge_detail: undefined, merge_files: undefined });
    const how = f.commit ? `merged ${rec.branch} into ${rec.base_branch} (${f.commit})` : `${rec.branch} had nothing to merge into ${rec.base_branch}`;
    await post(writers, taskDir, rec, 'INFO', f.detail ? `${how}: ${f.detail}` : how);
    return;
  }
  if (f.outcome !== 'conflict' && f.outcome !== 'failed') return; // an internal error is the queue entry's, not the task's
  updateWorktreeRecord(taskDir, { merge_status: f.outcome, merge_detail: f.detail, merge_files: f.files });
  const files = f.files?.length ? `\nfiles:\n${f.files.map((x) => `- ${x}`).join('\n')}` : '';
  await post(writers, taskDir, rec, f.outcome === 'conflict' ? 'MERGE_CONFLICT' : 'MERGE_FAILED', `${f.detail ?? ''}${files}`);
}

async function post(writers: BusWriters, taskDir: string, rec: WorktreeRecord, type: string, body: string): Promise<void> {
  const bus = writers(join(taskDir, TASK_BUS_FILE));
  try {
    await bus.append({ type, project_id: rec.project_id, task_id: rec.task_id, run_id: '', body });
  } finally {
    bus.close();
  }
}

async function mergeLocked(rec: WorktreeRecord, verify?: string): Promise<string> {
  const env = await identityEnv(rec.repo);
  await commitLeftovers(rec, env);
  const baseRef = `refs/heads/${checkRefArg(rec.base_branch, 'base_branch', true)}`;
  const baseTip = await git(rec.repo, ['rev-parse', '--verify', '--end-of-options', baseRef]);
  const branchTip = await git(rec.repo, ['rev-parse', '--verify', '--end-of-options', `refs/heads/${checkRefArg(rec.branch, 'branch', true)}`]);
  // already in the base (also: merged just before a crash that kept the queue from saying so): never merged twice
  if ((await gitRaw(rec.repo, ['merge-base', '--is-ancestor', branchTip, baseTip])).code === 0) return '';
  const scratch = join(rec.repo, '.conductor', 'merge', rec.task_id);
  // a scratch worktree left by an interrupted merge is never trusted: removed and made afresh
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
    if (verify) {
      const r = await runShell(verify, scratch, { ...worktreeEnv({ ...rec, path: scratch }), JRUN_TASK_ID: rec.task_id, JRUN_PROJECT_ID: rec.project_id }, { ownedGroup: true });
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

export interface ResumeReport {
  repo: string;
  /** Pending entries found (queued or interrupted). */
  pending: number;
  /** Of those, entries that were verifying when their runner died. */
  interrupted: number;
  ran: number;
  error?: string;
}

/**
 * After a restart: runs what the queues of `repos` still hold, in order (an interrupted verify is
 * re-verified). Waits for the merge lock as long as it takes (`lockTimeoutMs`, default 30 min) —
 * a live process that holds it runs the queue itself. `onFound` hears about each queue before it runs.
 */
export async function resumeMergeQueues(repos: string[], opts: { writers: BusWriters; lockTimeoutMs?: number; onFound?: (r: ResumeReport) => void }): Promise<ResumeReport[]> {
  const reports: ResumeReport[] = [];
  for (const repo of repos) {
    const report: ResumeReport = { repo, pending: 0, interrupted: 0, ran: 0 };
    try {
      const pending = readMergeQueue(repo).filter(isPending);
      if (!pending.length) continue;
      report.pending = pending.length;
      report.interrupted = pending.filter((e) => e.state === 'verifying').length;
      opts.onFound?.(report);
      const commonDir = await gitCommonDir(repo);
      await withFileLock(join(commonDir, 'conductor-merge.lock'), { timeoutMs: opts.lockTimeoutMs ?? 30 * 60_000, pollMs: 200 }, async () => {
        report.ran = await drainQueue(repo, commonDir, opts.writers);
      });
    } catch (err) {
      report.error = errorText(err);
    }
    reports.push(report);
  }
  return reports;
}
