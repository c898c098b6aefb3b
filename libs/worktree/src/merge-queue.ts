import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseYaml, stringifyYaml, withFileLock, writeFileAtomic } from '@app/storage';
import { WorktreeError } from './worktree.errors';

/**
 * The durable merge queue of one repository (issue #31): `<repo>/.conductor/merge-queue.yaml`.
 * It lives with the repository, not in a runs root, because the queue is per repository: the CLI
 * and servers with different runs roots merge into the same branches under the same lock
 * (`<git-dir>/conductor-merge.lock`). Every change is a read-modify-write under a short lock
 * (`<git-dir>/conductor-merge-queue.lock`) and an atomic, fsync'd replace (writeFileAtomic), so a
 * crash leaves the previous queue or the new one, never half of one.
 */
export const MERGE_QUEUE_FILE = join('.conductor', 'merge-queue.yaml');

export type MergeQueueState = 'queued' | 'verifying' | 'merged' | 'failed';
/** How a finished entry ended (`merged`: a new merge commit; `nothing`: the branch was already in the base). */
export type MergeOutcome = 'merged' | 'nothing' | 'conflict' | 'failed' | 'error' | 'timeout';

export interface MergeQueueEntry {
  /** Queue order: strictly increasing per repository. */
  seq: number;
  project_id: string;
  task_id: string;
  /** The task folder (WORKTREE.yaml, task bus) in the runs root of whoever queued it. */
  task_dir: string;
  branch: string;
  base_branch: string;
  /** The verify command the merge was queued with (re-run as is after a crash). */
  verify?: string;
  state: MergeQueueState;
  queued_at: string;
  /** When the last verification started (set with state `verifying`). */
  started_at?: string;
  finished_at?: string;
  /** How many times verification started (more than 1: resumed after an interrupted one). */
  attempts: number;
  outcome?: MergeOutcome;
  commit?: string;
  detail?: string;
  files?: string[];
}

interface MergeQueueDoc {
  next_seq: number;
  entries: MergeQueueEntry[];
}

/** Finished entries kept for clients that ask later (the newest ones). */
const KEEP_FINISHED = 50;
const LOCK_TIMEOUT_MS = 30_000;

/** Queued or verifying; an absent entry is not pending. */
export const isPending = (e: MergeQueueEntry | undefined): boolean => e?.state === 'queued' || e?.state === 'verifying';

export function mergeQueuePath(repo: string): string {
  return join(repo, MERGE_QUEUE_FILE);
}

function entryOf(raw: unknown): MergeQueueEntry | undefined {
  const e = raw as Partial<MergeQueueEntry> | null;
  if (!e || typeof e !== 'object' || typeof e.seq !== 'number' || typeof e.task_dir !== 'string' || typeof e.task_id !== 'string') return undefined;
  if (!['queued', 'verifying', 'merged', 'failed'].includes(String(e.state))) return undefined;
  return { ...e, attempts: Number(e.attempts ?? 0) } as MergeQueueEntry;
}

/** The queue as on disk ([] when there is none); an unreadable file is an error naming it (never silently emptied). */
export function readMergeQueue(repo: string): MergeQueueEntry[] {
  return readDoc(repo).entries;
}

function readDoc(repo: string): MergeQueueDoc {
  const path = mergeQueuePath(repo);
  if (!existsSync(path)) return { next_seq: 1, entries: [] };
  let doc: Partial<MergeQueueDoc> | null;
  try {
    doc = parseYaml(readFileSync(path, 'utf8')) as Partial<MergeQueueDoc> | null;
  } catch (err) {
    throw new WorktreeError('IO', `read ${path}: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!doc || typeof doc !== 'object' || !Array.isArray(doc.entries)) throw new WorktreeError('IO', `read ${path}: not a merge queue`);
  // one unreadable entry is that entry's problem: it is dropped, the others keep their order
  const entries = doc.entries.map(entryOf).filter((e): e is MergeQueueEntry => !!e).sort((a, b) => a.seq - b.seq);
  const maxSeq = entries.reduce((m, e) => Math.max(m, e.seq), 0);
  return { next_seq: Math.max(Number(doc.next_seq) || 1, maxSeq + 1), entries };
}

function writeDoc(repo: string, doc: MergeQueueDoc): void {
  const finished = doc.entries.filter((e) => !isPending(e));
  const drop = new Set(finished.slice(0, Math.max(0, finished.length - KEEP_FINISHED)).map((e) => e.seq));
  const entries = doc.entries.filter((e) => !drop.has(e.seq));
  mkdirSync(join(repo, '.conductor'), { recursive: true, mode: 0o755 });
  writeFileAtomic(mergeQueuePath(repo), stringifyYaml({ next_seq: doc.next_seq, entries }), 'merge-queue.*.yaml.tmp');
}

/** Read-modify-write of the queue under its lock; `fn` returns what the caller gets and whether to write. */
async function changeQueue<T>(repo: string, commonDir: string, fn: (doc: MergeQueueDoc) => { value: T; write: boolean }): Promise<T> {
  return withFileLock(join(commonDir, 'conductor-merge-queue.lock'), { timeoutMs: LOCK_TIMEOUT_MS, pollMs: 20 }, () => {
    const doc = readDoc(repo);
    const { value, write } = fn(doc);
    if (write) writeDoc(repo, doc);
    return value;
  });
}

export type NewEntry = Pick<MergeQueueEntry, 'project_id' | 'task_id' | 'task_dir' | 'branch' | 'base_branch' | 'verify'>;

/**
 * Queues a merge (durably) and returns its entry. A task that is already queued or verifying keeps
 * its place: asking twice never queues (or merges) it twice.
 */
export function enqueueMerge(repo: string, commonDir: string, req: NewEntry): Promise<MergeQueueEntry> {
  return changeQueue(repo, commonDir, (doc) => {
    const existing = doc.entries.find((e) => isPending(e) && e.task_dir === req.task_dir);
    if (existing) return { value: existing, write: false };
    const entry: MergeQueueEntry = { seq: doc.next_seq++, ...req, state: 'queued', queued_at: new Date().toISOString(), attempts: 0 };
    if (!entry.verify) delete entry.verify;
    doc.entries.push(entry);
    return { value: entry, write: true };
  });
}

/** The first pending entry (queue order), marked `verifying` with attempts+1 before anything runs. */
export function claimHead(repo: string, commonDir: string): Promise<MergeQueueEntry | undefined> {
  return changeQueue(repo, commonDir, (doc) => {
    const head = doc.entries.find(isPending);
    if (!head) return { value: undefined, write: false };
    head.state = 'verifying';
    head.started_at = new Date().toISOString();
    head.attempts += 1;
    return { value: { ...head }, write: true };
  });
}

export type Finish = Pick<MergeQueueEntry, 'outcome' | 'commit' | 'detail' | 'files'> & { state: 'merged' | 'failed' };

/** Records how entry `seq` ended; `onlyIf` limits it to entries in that state (a timeout only withdraws a queued one). */
export function finishEntry(repo: string, commonDir: string, seq: number, finish: Finish, onlyIf?: MergeQueueState): Promise<MergeQueueEntry | undefined> {
  return changeQueue(repo, commonDir, (doc) => {
    const e = doc.entries.find((x) => x.seq === seq);
    if (!e || !isPending(e) || (onlyIf && e.state !== onlyIf)) return { value: e && { ...e }, write: false };
    Object.assign(e, finish, { finished_at: new Date().toISOString() });
    for (const key of ['commit', 'detail', 'files'] as const) if (e[key] === undefined || (Array.isArray(e[key]) && !e[key]!.length)) delete e[key];
    return { value: { ...e }, write: true };
  });
}

/** Entry `seq` as on disk now. */
export function queueEntry(repo: string, seq: number): MergeQueueEntry | undefined {
  return readMergeQueue(repo).find((e) => e.seq === seq);
}

/** The newest entry of a task, with its place among the pending ones (1 = next or running); undefined if none or unreadable. */
export function taskQueueEntry(repo: string, taskDir: string): (MergeQueueEntry & { position?: number }) | undefined {
  let entries: MergeQueueEntry[];
  try {
    entries = readMergeQueue(repo);
  } catch {
    return undefined;
  }
  const mine = entries.filter((e) => e.task_dir === taskDir).pop();
  if (!mine) return undefined;
  const position = isPending(mine) ? entries.filter(isPending).findIndex((e) => e.seq === mine.seq) + 1 : undefined;
  return position ? { ...mine, position } : mine;
}
