import { resolve } from 'node:path';
import type { BusWriters } from '@app/messagebus';
import { AppConfig, StorageError } from '@app/storage';
import { WorktreeError } from './worktree.errors';
import { gitCommonDir } from './git';
import { enqueueMerge, finishEntry, isPending, MergeQueueEntry, queueEntry, taskQueueEntry } from './merge-queue';
import { drainQueue, tryMergeLock } from './merge-run';
import { readWorktreeRecord, WorktreeRecord } from './record';

export interface MergeOptions {
  taskDir: string;
  /** Writes the outcome to the task bus (the composition root's factory). */
  writers: BusWriters;
  config?: AppConfig;
  /** How long to wait in the repository's merge queue (default 30 min). */
  queueTimeoutMs?: number;
  /** How often a waiting merge looks at the queue (default 100 ms). */
  pollMs?: number;
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
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Merges a task's branch into its base branch through the repository's durable merge queue
 * (`<repo>/.conductor/merge-queue.yaml`, merge-queue.ts): the merge is queued first (fsync'd),
 * then run in queue order by whoever holds the repository's merge lock — this process when the
 * lock is free, else an earlier one that finds it at the head. The merge and the verify command
 * run in a scratch worktree; the base branch moves only when both succeed, so a conflict or a red
 * verify leaves it untouched. The outcome is recorded in the queue, in WORKTREE.yaml and on the
 * task bus (MERGE_CONFLICT / MERGE_FAILED name the files and the reason).
 */
export async function mergeTask(opts: MergeOptions): Promise<MergeResult> {
  const rec = readWorktreeRecord(opts.taskDir);
  if (!rec) throw new WorktreeError('NOT_FOUND', 'task has no worktree (it was not started with --worktree)');
  // merged, unless the queue still holds its entry (its owner died after recording the merge on the task): that entry is finished first
  if (rec.merge_status === 'merged' && !isPending(taskQueueEntry(rec.repo, resolve(opts.taskDir)))) {
    return resultOf(rec, rec.merged_commit ?? '', true);
  }
  if (!rec.base_branch) {
    throw new WorktreeError('MERGE_FAILED', `task ${rec.task_id} started from a commit, not a branch: nothing to merge into (start it with --base <branch>)`);
  }
  const commonDir = await gitCommonDir(rec.repo);
  const entry = await enqueueMerge(rec.repo, commonDir, {
    project_id: rec.project_id,
    task_id: rec.task_id,
    task_dir: resolve(opts.taskDir),
    branch: rec.branch,
    base_branch: rec.base_branch,
    verify: opts.config?.worktree?.verify,
  });
  const done = await waitForEntry(rec.repo, commonDir, opts.writers, entry.seq, opts.queueTimeoutMs ?? DEFAULT_QUEUE_TIMEOUT_MS, opts.pollMs ?? 100);
  return outcomeOf(rec, done);
}

/** Runs the queue while the lock is free, else watches entry `seq` until someone finished it. */
async function waitForEntry(repo: string, commonDir: string, writers: BusWriters, seq: number, timeoutMs: number, pollMs: number): Promise<MergeQueueEntry> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const e = queueEntry(repo, seq);
    if (!e) throw new WorktreeError('MERGE_FAILED', `merge queue entry ${seq} of ${repo} is gone (the queue file was removed or rewritten)`);
    if (!isPending(e)) return e;
    if (await tryMergeLock(commonDir, async () => void (await drainQueue(repo, commonDir, writers, seq)))) continue;
    if (Date.now() >= deadline) {
      // withdrawn only while still queued: one that is verifying now is waited for
      const left = await finishEntry(repo, commonDir, seq, { state: 'failed', outcome: 'timeout', detail: `gave up after ${Math.round(timeoutMs / 1000)} s waiting in the merge queue` }, 'queued');
      if (left?.outcome === 'timeout') throw new StorageError('LOCK_TIMEOUT', `timed out waiting in the merge queue of ${repo} (earlier merges still running); nothing merged`);
    }
    await sleep(pollMs);
  }
}

function resultOf(rec: WorktreeRecord, commit: string, already: boolean): MergeResult {
  return { task_id: rec.task_id, branch: rec.branch, base_branch: rec.base_branch, commit, already_merged: already };
}

/** A finished queue entry as the caller's result, or the error it ended with. */
function outcomeOf(rec: WorktreeRecord, e: MergeQueueEntry): MergeResult {
  if (e.state === 'merged') return resultOf(rec, e.outcome === 'merged' ? (e.commit ?? '') : '', false);
  const files = e.files?.length ? ` (${e.files.join(', ')})` : '';
  throw new WorktreeError(e.outcome === 'conflict' ? 'MERGE_CONFLICT' : 'MERGE_FAILED', `${e.detail ?? 'merge failed'}${files}`);
}
